import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';

/**
 * Paths for the tests of one file: a temp directory made before them and removed after
 * them, and a new path under it at each call (nothing is created there).
 */
export function freshPaths(prefix: string): () => string {
  let root: string | undefined;
  let n = 0;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), prefix));
  });
  after(async () => {
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });
  return () => join(root!, `t${n++}`);
}

/** As freshPaths, each path made as an empty directory. */
export function freshDirs(prefix: string): () => Promise<string> {
  const next = freshPaths(prefix);
  return async () => {
    const dir = next();
    await mkdir(dir);
    return dir;
  };
}
