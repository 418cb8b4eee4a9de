import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { tempName } from './layout.js';

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
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions,
): Promise<void> {
  const tmp = join(dirname(path), tempName(basename(path), options.nodeId, sequence++));
  const handle = await open(tmp, 'wx');
  try {
    try {
      await handle.writeFile(data);
      if (options.fsync) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}
