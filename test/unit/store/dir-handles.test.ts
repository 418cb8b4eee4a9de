import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { writeFileAtomic } from '../../../src/store/atomic-write.js';
import { DirHandles } from '../../../src/store/dir-handles.js';
import { hookFs } from '../../support/fs-hook.js';
import { freshDirs } from '../../support/temp-paths.js';
import { nodeMount } from '../../../src/store/mount.js';

const PREFIX = 'mountcrawl-dirhandles-';
const freshDir = freshDirs(PREFIX);

/** The directories this process has open now, by path. */
async function openDirs(): Promise<string[]> {
  const out: string[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target.includes(`/${PREFIX}`)) out.push(target);
  }
  return out;
}

const linux = process.platform === 'linux' ? {} : { skip: 'DirHandles use /proc/self/fd (Linux)' };

describe('DirHandles', linux, () => {
  test('a call gets another name of the directory: a file written through it is in the directory', async () => {
    const dir = await freshDir();
    const dirs = new DirHandles();
    const via = await dirs.use(dir, async (v) => {
      assert.match(v ?? '', /^\/proc\/self\/fd\/\d+$/);
      await writeFile(`${v}/a.txt`, 'through the handle');
      return v;
    });
    assert.equal(await readFile(join(dir, 'a.txt'), 'utf8'), 'through the handle');
    // The same directory again: the same descriptor, not a second one.
    assert.equal(await dirs.use(dir, async (v) => v), via);
    assert.deepEqual(await openDirs(), [dir]);
    dirs.close();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(await openDirs(), []);
  });

  test('a dropped directory stays open until the call using it ends (its number is not reused under it)', async () => {
    const dir = await freshDir();
    const dirs = new DirHandles();
    await dirs.use(dir, async (v) => {
      dirs.drop(dir);
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(await openDirs(), [dir], 'still open while in use');
      await writeFile(`${v}/b.txt`, 'still the same directory');
    });
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(await openDirs(), [], 'closed once the call ended');
    assert.equal(await readFile(join(dir, 'b.txt'), 'utf8'), 'still the same directory');
    assert.equal(dirs.size, 0);
  });

  test('a directory that cannot be opened: the call gets undefined (it goes by path) and nothing is kept', async () => {
    const dirs = new DirHandles();
    const missing = join(await freshDir(), 'never-made');
    assert.equal(await dirs.use(missing, async (v) => v), undefined);
    assert.equal(dirs.size, 0);
    await mkdir(missing);
    assert.match((await dirs.use(missing, async (v) => v)) ?? '', /^\/proc\/self\/fd\//, 'made meanwhile: opened on the next use');
    dirs.close();
  });

  test('at most 512 stay open, the least recently used closed first', async () => {
    const parent = await freshDir();
    const dirs = new DirHandles();
    const names = Array.from({ length: 520 }, (_, i) => join(parent, `d${i}`));
    for (const d of names) await mkdir(d);
    for (const d of names) await dirs.use(d, async () => undefined);
    assert.equal(dirs.size, 512);
    await new Promise((r) => setTimeout(r, 50));
    const open = new Set(await openDirs());
    assert.equal(open.size, 512);
    for (const d of names.slice(0, 8)) assert.equal(open.has(d), false, `${d}: among the oldest`);
    for (const d of names.slice(8)) assert.equal(open.has(d), true);
    dirs.close();
  });

  test('on a local directory forDataDir gives none: paths cost no round trips there', async () => {
    assert.equal(await DirHandles.forDataDir(await freshDir()), undefined);
  });
});

describe('writeFileAtomic through a directory handle', linux, () => {
  test('writes the same file; only the last name of each path is looked up', async () => {
    const dir = await freshDir();
    const dirs = new DirHandles();
    const seen: string[] = [];
    const restore = hookFs<(a: string, b: string, cb: (err: Error | null) => void) => void>('rename', (original) => (a, b, cb) => {
      seen.push(a, b);
      original(a, b, cb);
    });
    try {
      await dirs.use(dir, (via) =>
        writeFileAtomic(nodeMount, join(dir, 'x.json'), '{"a":1}', { nodeId: 'n1', fsync: false, ...(via === undefined ? {} : { via }) }),
      );
    } finally {
      restore();
      dirs.close();
    }
    assert.equal(await readFile(join(dir, 'x.json'), 'utf8'), '{"a":1}');
    assert.deepEqual(await readdir(dir), ['x.json']);
    assert.equal(seen.length, 2);
    for (const p of seen) assert.match(p, /^\/proc\/self\/fd\/\d+\/[^/]+$/);
  });

  test('an error names the real path, not the handle, and leaves no temporary file', async () => {
    const dir = await freshDir();
    await mkdir(join(dir, 'target'));
    await writeFile(join(dir, 'target', 'inside'), 'keep');
    const dirs = new DirHandles();
    const err = await dirs
      .use(dir, (via) =>
        writeFileAtomic(nodeMount, join(dir, 'target'), 'data', { nodeId: 'n1', fsync: false, ...(via === undefined ? {} : { via }) }),
      )
      .then(
        () => assert.fail('the rename onto a directory must fail'),
        (e: NodeJS.ErrnoException & { dest?: string }) => e,
      );
    dirs.close();
    assert.doesNotMatch(err.message, /\/proc\/self\/fd/);
    assert.equal(err.dest, join(dir, 'target'));
    assert.ok(err.path?.startsWith(`${dir}/.`), err.path);
    assert.deepEqual(await readdir(dir), ['target']);
  });
});
