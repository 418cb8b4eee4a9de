import { unlink } from 'node:fs';

/**
 * Temporary files of failed writes that could not be removed then (the mount was failing):
 * removeLeftTemps() tries again once the mount is back, so that a fault leaves no litter
 * (docs/protocol.md, "Faults of the mount").
 */
const leftTemps = new Set<string>();

/**
 * Remembers a temporary file that may exist on the server although the call that made it
 * failed (an open whose reply was lost): removeLeftTemps() removes it once the mount is back.
 */
export function rememberTemp(tmp: string): void {
  leftTemps.add(tmp);
}

/** Unlinks `tmp`; true when it is gone (removed now, or not there). */
function unlinked(tmp: string): Promise<boolean> {
  return new Promise((resolve) => unlink(tmp, (err) => resolve(err === null || err.code === 'ENOENT')));
}

/**
 * Removes the temporary file of a write that failed or is done with it. When the mount
 * refuses (it is failing), the file is remembered and removed by removeLeftTemps() later.
 */
export async function removeTemp(tmp: string): Promise<void> {
  if (!(await unlinked(tmp))) leftTemps.add(tmp);
}

/** Removes the temporary files failed writes left behind; returns how many are still there. */
export async function removeLeftTemps(): Promise<number> {
  for (const tmp of [...leftTemps]) if (await unlinked(tmp)) leftTemps.delete(tmp);
  return leftTemps.size;
}
