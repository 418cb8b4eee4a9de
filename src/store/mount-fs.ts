/**
 * The file system a node's core uses on the data directory, as a parameter: the real one
 * (node's fs on a local disk, NFS or sshfs) in a crawl, an in-memory one in tests and in a
 * simulation, which keeps exactly the guarantees docs/protocol.md relies on and no more. Errors are node's: an Error with `code` ('ENOENT', 'EEXIST', 'EPERM', 'EIO',
 * 'ENOSPC', 'ENOTEMPTY', ...).
 *
 * Only primitives the protocol names are here, so that every rule built on them (the atomic
 * write as temporary file then rename, the exclusive create as temporary file then link, the
 * lease's rename aside) is the project's own code, run the same way on every file system.
 */
export interface MountStat {
  readonly size: number;
  /** Modification time in wall-clock milliseconds, as the file server keeps it. */
  readonly mtimeMs: number;
  isDirectory(): boolean;
  isFile(): boolean;
}

export interface MountFs {
  /** The whole file. Over a network mount a file replaced during the read may come back torn. */
  readFile(path: string): Promise<Buffer>;
  /**
   * Creates `path`, which must not exist (EEXIST otherwise), writes `data` and closes it;
   * with `fsync`, flushed before the close. A failure may leave the file, whole or in part.
   */
  writeNew(path: string, data: string | Uint8Array, options?: { readonly fsync?: boolean }): Promise<void>;
  /** Atomically gives `from` the name `to`, replacing a file of that name. */
  rename(from: string, to: string): Promise<void>;
  /** A second name for `existing`; EEXIST (EPERM over sshfs) when `newPath` exists: granted to one caller. */
  link(existing: string, newPath: string): Promise<void>;
  unlink(path: string): Promise<void>;
  mkdir(path: string, options?: { readonly recursive?: boolean }): Promise<void>;
  /** Removes an empty directory (ENOTEMPTY otherwise). */
  rmdir(path: string): Promise<void>;
  /** The names in a directory. Over a network mount it may lag behind creates and removes. */
  readdir(path: string): Promise<string[]>;
  stat(path: string): Promise<MountStat>;
}
