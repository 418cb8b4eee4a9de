import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { nodeMount } from '../../src/store/mount.js';
import { tempOwner } from '../../src/store/temp-names.js';
import { hookFs } from './fs-hook.js';

type Cb = (...args: unknown[]) => void;

/**
 * Runs `failing` (a write that fails on a cut link) while every unlink fails with EIO too,
 * then checks that the one temporary file it left in `dir` (named for `owner`) is remembered
 * and removed once the mount lets go of it: no litter after a fault.
 */
export async function leavesNoLitter(dir: string, owner: string, failing: () => Promise<void>): Promise<void> {
  const restoreUnlink = hookFs<(p: string, cb: Cb) => void>(
    'unlink',
    () => (_p, cb) => cb(Object.assign(new Error('EIO: i/o error, unlink'), { code: 'EIO' })),
  );
  try {
    await failing();
    assert.equal(await nodeMount.temps.removeLeft(), 1, 'still failing: still there');
  } finally {
    restoreUnlink();
  }
  const left = await readdir(dir);
  assert.equal(left.length, 1);
  assert.equal(tempOwner(left[0]!), owner);
  assert.equal(await nodeMount.temps.removeLeft(), 0);
  assert.deepEqual(await readdir(dir), [], 'the mount is back: the temporary file is gone');
}
