import type { Mount } from './mount.js';

/**
 * Creates `path` with `data` only if no file has that name, atomically across machines on a
 * shared mount: the content goes to a temporary file first, then `link(2)` gives it the final
 * name, which the server grants to exactly one caller (docs/protocol.md, "What the file system must give": 0 double winners in
 * 1,000 races). The file therefore never appears empty or partial, unlike `open('wx')`
 * followed by a write.
 *
 * Returns true when this call created the file, false when a file was already there. Over
 * sshfs the loser gets EPERM rather than EEXIST; both mean "someone else has it". The
 * caller must read the file back to learn who, and also after an I/O error, since the link
 * may have happened on the server anyway.
 */
export async function createExclusive(mount: Mount, path: string, data: string, nodeId: string): Promise<boolean> {
  const tmp = mount.nextTempPath(path, nodeId);
  try {
    await mount.fs.writeNew(tmp, data);
  } catch (err) {
    // A write that failed over a failing mount may have made the file all the same (a lost
    // reply): removed now, or once the mount is back (LeftTemps.removeLeft). EEXIST: not ours.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') await mount.temps.remove(tmp);
    throw err;
  }
  try {
    await mount.fs.link(tmp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'EPERM') return false;
    throw err;
  } finally {
    await mount.temps.remove(tmp);
  }
}
