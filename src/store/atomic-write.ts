import { close, fsync, open, rename, write } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { LeftTemps } from './left-temps.js';
import type { Mount } from './mount.js';
import { type WriteFailure, type WriteThread, WriteThreadLost } from './write-thread.js';

/** Options of one atomic write. */
export interface AtomicWriteOptions {
  /** Node id written into the temporary name, so that a later owner can clean it up. */
  readonly nodeId: string;
  /** fsync the file before the rename (survives power loss on local disks; costs a flush). */
  readonly fsync: boolean;
  /**
   * Another name of the file's directory to make the calls through (`/proc/self/fd/N` of
   * DirHandles: fewer round trips on a network mount). The file and its temporary file are
   * the same; errors and temporary files left behind name the real path.
   */
  readonly via?: string;
  /** The thread that makes writes on a local disk (WriteThread); the calls go through libuv's pool without it. */
  readonly thread?: WriteThread | undefined;
}

/**
 * Writes `data` to `path` whole or not at all (docs/protocol.md, invariant 1): the bytes go to a hidden
 * temporary file in the same directory, created exclusively, then one rename publishes it,
 * replacing any earlier version atomically. A reader (on this machine or another one on the
 * mount) sees the old file, the new file, or no file: never a part. If anything fails the
 * temporary file is removed when possible and the error is thrown.
 *
 * On the real file system it is written with the callback API: one promise per file instead
 * of one per step and no FileHandle objects (this runs two or three times per page). On any
 * other (Mount.native false) the same steps go through its MountFs: writeNew, then rename.
 */
export function writeFileAtomic(mount: Mount, path: string, data: string | Uint8Array, options: AtomicWriteOptions): Promise<void> {
  if (!mount.native) return writeThroughFs(mount, path, data, options);
  if (byThread(options)) return writeByThread(mount, options.thread!, [{ path, data }], options.nodeId);
  const { temps } = mount;
  const name = basename(path);
  const tmpName = mount.nextTempName(name, options.nodeId);
  const tmp = join(dirname(path), tmpName);
  const { via } = options;
  // The names the calls use: through `via` when given.
  const [callTmp, callPath] = via === undefined ? [tmp, path] : [`${via}/${tmpName}`, `${via}/${name}`];
  const named = (err: NodeJS.ErrnoException): NodeJS.ErrnoException => (via === undefined ? err : realNames(err, via, dirname(path)));
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  return new Promise((resolve, reject) => {
    const fail = (err: Error): void => void failedAfterOpen(temps, tmp, err).catch((e: NodeJS.ErrnoException) => reject(named(e)));
    open(callTmp, 'wx', 0o666, (openErr, fd) => {
      if (openErr) return void failedOpen(temps, tmp, openErr).catch((err: NodeJS.ErrnoException) => reject(named(err)));
      const closeThenRename = (writeErr: Error | null): void => {
        close(fd, (closeErr) => {
          const err = writeErr ?? closeErr;
          if (err) return fail(err);
          rename(callTmp, callPath, (renameErr) => (renameErr ? fail(renameErr) : resolve()));
        });
      };
      const writeFrom = (offset: number): void => {
        if (offset >= bytes.length) {
          if (options.fsync) fsync(fd, closeThenRename);
          else closeThenRename(null);
          return;
        }
        write(fd, bytes, offset, bytes.length - offset, null, (writeErr, written) => {
          if (writeErr) closeThenRename(writeErr);
          else writeFrom(offset + written);
        });
      };
      writeFrom(0);
    });
  });
}

/**
 * writeFileAtomic of each file, one after another: a file is written only if the ones before it
 * were, and the first failure is thrown. With a WriteThread the files go to it in one message
 * (WriteThread.writeInOrder); the temporary files, steps and clean-up are writeFileAtomic's.
 */
export async function writeFilesAtomic(
  mount: Mount,
  files: readonly { path: string; data: string | Uint8Array }[],
  options: AtomicWriteOptions,
): Promise<void> {
  if (mount.native && byThread(options)) return writeByThread(mount, options.thread!, files, options.nodeId);
  for (const { path, data } of files) await writeFileAtomic(mount, path, data, options);
}

/** writeFileAtomic through a MountFs: the temporary file by writeNew, then the rename; the same clean-up. */
async function writeThroughFs(mount: Mount, path: string, data: string | Uint8Array, options: AtomicWriteOptions): Promise<void> {
  const tmp = mount.nextTempPath(path, options.nodeId);
  try {
    await mount.fs.writeNew(tmp, data, { fsync: options.fsync });
  } catch (err) {
    // A create that failed may have made the file all the same (a lost reply), whole or in
    // part: removed now, or once the mount is back. EEXIST: not ours.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') await mount.temps.remove(tmp);
    throw err;
  }
  try {
    await mount.fs.rename(tmp, path);
  } catch (err) {
    return failedAfterOpen(mount.temps, tmp, err as Error);
  }
}

/** True when the writes go to the WriteThread: one given and working, no `via`, no fsync. */
function byThread(options: AtomicWriteOptions): boolean {
  return options.thread?.usable === true && options.via === undefined && !options.fsync;
}

/** writeFilesAtomic by a WriteThread (one message): the same temporary files, steps and clean-up. */
async function writeByThread(
  mount: Mount,
  thread: WriteThread,
  files: readonly { path: string; data: string | Uint8Array }[],
  nodeId: string,
): Promise<void> {
  const jobs = files.map(({ path, data }) => ({ tmp: mount.nextTempPath(path, nodeId), path, data }));
  let failures: (WriteFailure | undefined)[];
  try {
    failures = await Promise.all(thread.writeInOrder(jobs));
  } catch (err) {
    if (!(err instanceof WriteThreadLost)) throw err;
    // Stopped before it answered: any write may be half done. The temporary files go, and the
    // writes are made again by the pool (a rename that did happen is replaced by the same bytes).
    for (const job of jobs) await mount.temps.remove(job.tmp);
    for (const { path, data } of files) await writeFileAtomic(mount, path, data, { nodeId, fsync: false });
    return;
  }
  // The files after the first failure were skipped: nothing of theirs to remove.
  const first = failures.findIndex((f) => f !== undefined);
  if (first >= 0) return threadFailed(mount.temps, jobs[first]!.tmp, failures[first]!);
}

/** A write the thread answered with a failure: the error of the call, after writeFileAtomic's clean-up of `tmp`. */
function threadFailed(temps: LeftTemps, tmp: string, failure: WriteFailure): Promise<never> {
  const err = Object.assign(new Error(failure.message), {
    code: failure.code,
    errno: failure.errno,
    syscall: failure.syscall,
    path: failure.path,
    dest: failure.dest,
  }) as NodeJS.ErrnoException;
  return failure.step === 'open' ? failedOpen(temps, tmp, err) : failedAfterOpen(temps, tmp, err);
}

/**
 * The create of `tmp` failed: over a network mount an open that failed with EIO may still have
 * created the file (the reply was lost), so it is remembered and removed once the mount is
 * back. EEXIST: not ours. Rejects with `err`.
 */
async function failedOpen(temps: LeftTemps, tmp: string, err: NodeJS.ErrnoException): Promise<never> {
  if (err.code !== 'EEXIST') temps.remember(tmp);
  throw err;
}

/** A step after the create failed: the temporary file goes (or is remembered), then rejects with `err`. */
async function failedAfterOpen(temps: LeftTemps, tmp: string, err: Error): Promise<never> {
  await temps.remove(tmp);
  throw err;
}

/** An error of a call made through `via`, naming the directory's real path instead. */
function realNames(err: NodeJS.ErrnoException, via: string, dir: string): NodeJS.ErrnoException {
  const real = (p: string): string => (p.startsWith(`${via}/`) ? dir + p.slice(via.length) : p);
  if (err.path !== undefined) err.path = real(err.path);
  const withDest = err as NodeJS.ErrnoException & { dest?: string };
  if (withDest.dest !== undefined) withDest.dest = real(withDest.dest);
  err.message = err.message.replaceAll(`${via}/`, `${dir}/`);
  return err;
}
