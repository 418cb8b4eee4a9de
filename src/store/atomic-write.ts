import { close, fsync, open, rename, write } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { tempName } from './layout.js';
import { rememberTemp, removeTemp } from './left-temps.js';

/** Options of one atomic write. */
export interface AtomicWriteOptions {
  /** Node id written into the temporary name, so that a later owner can clean it up. */
  readonly nodeId: string;
  /** fsync the file before the rename (survives power loss on local disks; costs a flush). */
  readonly fsync: boolean;
}

let sequence = 0;

/**
 * Writes `data` to `path` whole or not at all (DESIGN invariant 1): the bytes go to a hidden
 * temporary file in the same directory, created exclusively, then one rename publishes it,
 * replacing any earlier version atomically. A reader (on this machine or another one on the
 * mount) sees the old file, the new file, or no file: never a part. If anything fails the
 * temporary file is removed when possible and the error is thrown.
 *
 * Written with the callback API: one promise per file instead of one per step and no
 * FileHandle objects (this runs two or three times per page).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions): Promise<void> {
  const tmp = join(dirname(path), tempName(basename(path), options.nodeId, sequence++));
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  return new Promise((resolve, reject) => {
    const fail = (err: Error): void => void removeTemp(tmp).then(() => reject(err));
    open(tmp, 'wx', 0o666, (openErr, fd) => {
      if (openErr) {
        // Over a network mount an open that failed with EIO may still have created the file
        // (the reply was lost): it is removed once the mount is back. EEXIST: not ours.
        if (openErr.code !== 'EEXIST') rememberTemp(tmp);
        return reject(openErr);
      }
      const closeThenRename = (writeErr: Error | null): void => {
        close(fd, (closeErr) => {
          const err = writeErr ?? closeErr;
          if (err) return fail(err);
          rename(tmp, path, (renameErr) => (renameErr ? fail(renameErr) : resolve()));
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
