import { close, constants, open } from 'node:fs';
import { open as openDir, stat } from 'node:fs/promises';
import { fileSystemKind } from './fs-kind.js';

/** How many directories stay open at most (each is an open directory on the file server too). */
const MAX_OPEN = 512;

interface Entry {
  /** The descriptor once open; undefined when the open failed. */
  readonly ready: Promise<number | undefined>;
  fd: number | undefined;
  users: number;
  /** Out of the table (dropped or evicted): closed once its last user is done. */
  gone: boolean;
  closed: boolean;
}

/**
 * Open descriptors of the directories a node writes into, to reach them as
 * `/proc/self/fd/N/name` (docs/protocol.md, "Round trips on a network mount"). On a mount
 * that caches no directory entries (sshfs with entry_timeout=0, NFS with lookupcache=none),
 * the kernel asks the server about every directory of a path again at every call: an atomic
 * write of `DATA/links/<host>/<key>` (create the temporary file, rename it) cost 18 SFTP
 * requests, 13 of them LSTATs of the same directories. Through an open descriptor of
 * `links/<host>` the kernel looks up only the last name: 9 requests. The files and their
 * names on the mount are exactly the same; only the way to them changes.
 *
 * A descriptor is closed only when no call is using it (a closed number can be reused by
 * the next open, and a path through it would then lead elsewhere). At most MAX_OPEN stay
 * open, the least recently used go first. `drop` forgets a directory that was removed (its
 * descriptor would lead to the removed directory): the next use opens it again.
 */
export class DirHandles {
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  /**
   * Handles for a data directory on a network file system, on Linux (which has
   * /proc/self/fd); undefined elsewhere, where a path costs no round trips or the way
   * does not exist.
   */
  static async forDataDir(dataDir: string): Promise<DirHandles | undefined> {
    if ((await fileSystemKind(dataDir)) !== 'network') return undefined;
    try {
      // The way must work for this process: /proc may be missing or mounted without it, or
      // this process's own entries may not be its to follow (after a change of user).
      const dir = await openDir(dataDir, constants.O_RDONLY | constants.O_DIRECTORY);
      try {
        await stat(`/proc/self/fd/${dir.fd}/.`);
      } finally {
        await dir.close();
      }
      return new DirHandles();
    } catch {
      return undefined;
    }
  }

  /** Directories open now (for tests). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Runs `fn` with another name of `dir` (`/proc/self/fd/N`), or with undefined when the
   * directory cannot be opened (then `fn` uses the path, and fails as it would have).
   */
  async use<T>(dir: string, fn: (via: string | undefined) => Promise<T>): Promise<T> {
    if (this.#closed) return fn(undefined);
    let e = this.#entries.get(dir);
    if (e === undefined) {
      e = this.#open(dir);
      this.#entries.set(dir, e);
    } else {
      // Most recently used last: eviction takes the first.
      this.#entries.delete(dir);
      this.#entries.set(dir, e);
    }
    e.users++;
    try {
      const fd = await e.ready;
      return await fn(fd === undefined ? undefined : `/proc/self/fd/${fd}`);
    } finally {
      e.users--;
      if (e.gone) this.#closeIfUnused(e);
      this.#trim();
    }
  }

  /** Forgets `dir` (it was removed, or a call through it failed): the next use opens it again. */
  drop(dir: string): void {
    const e = this.#entries.get(dir);
    if (e === undefined) return;
    this.#entries.delete(dir);
    e.gone = true;
    this.#closeIfUnused(e);
  }

  /** Closes every descriptor not in use now and the others as their calls end; later uses go by path. */
  close(): void {
    this.#closed = true;
    for (const dir of [...this.#entries.keys()]) this.drop(dir);
  }

  #open(dir: string): Entry {
    const e: Entry = {
      ready: new Promise((resolve) =>
        open(dir, constants.O_RDONLY | constants.O_DIRECTORY, (err, fd) => {
          if (err) {
            // Not kept: the next use tries again (the directory may be made meanwhile).
            if (this.#entries.get(dir) === e) this.#entries.delete(dir);
            e.gone = true;
            e.closed = true;
            resolve(undefined);
            return;
          }
          e.fd = fd;
          if (e.gone) this.#closeIfUnused(e);
          resolve(fd);
        }),
      ),
      fd: undefined,
      users: 0,
      gone: false,
      closed: false,
    };
    return e;
  }

  #closeIfUnused(e: Entry): void {
    if (e.users > 0 || e.closed || e.fd === undefined) return;
    e.closed = true;
    close(e.fd, () => undefined);
  }

  /** Evicts the least recently used directories not in use while more than MAX_OPEN are open. */
  #trim(): void {
    if (this.#entries.size <= MAX_OPEN) return;
    for (const [dir, e] of this.#entries) {
      if (this.#entries.size <= MAX_OPEN) break;
      if (e.users === 0) this.drop(dir);
    }
  }
}
