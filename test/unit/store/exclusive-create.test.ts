import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createExclusive } from '../../../src/store/exclusive-create.js';
import { tempOwner } from '../../../src/store/temp-names.js';
import { hookFsPromises } from '../../support/fs-hook.js';
import { leavesNoLitter } from '../../support/left-temps.js';
import { freshDirs } from '../../support/temp-paths.js';
import { nodeMount } from '../../../src/store/mount.js';

const freshDir = freshDirs('mountcrawl-exclusive-');

/** Content of caller `i`: large, distinct, and checkable as a whole. */
const contentOf = (i: number): string => `${`caller ${i};`.repeat(20_000)}end ${i}\n`;

describe('createExclusive (local file system)', () => {
  test('creates a new file with the content and leaves no temp file', async () => {
    const dir = await freshDir();
    const path = join(dir, 'example.org.lease');
    assert.equal(await createExclusive(nodeMount, path, 'hello\n', 'ws1-100'), true);
    assert.equal(await readFile(path, 'utf8'), 'hello\n');
    assert.deepEqual(await readdir(dir), ['example.org.lease']);
  });

  test('an existing file is left as it is: false', async () => {
    const dir = await freshDir();
    const path = join(dir, 'x.lease');
    await writeFile(path, 'first');
    assert.equal(await createExclusive(nodeMount, path, 'second', 'ws1-100'), false);
    assert.equal(await readFile(path, 'utf8'), 'first');
    assert.deepEqual(await readdir(dir), ['x.lease']);
  });

  test('many concurrent callers: exactly one wins, the file holds exactly its content, no temp left', async () => {
    for (let round = 0; round < 5; round++) {
      const dir = await freshDir();
      const path = join(dir, 'contended.lease');
      const results = await Promise.all(Array.from({ length: 24 }, (_, i) => createExclusive(nodeMount, path, contentOf(i), `node-${i}`)));
      const winners = results.flatMap((won, i) => (won ? [i] : []));
      assert.equal(winners.length, 1, `round ${round}: winners ${winners.join(',')}`);
      assert.equal(await readFile(path, 'utf8'), contentOf(winners[0]!));
      assert.deepEqual(await readdir(dir), ['contended.lease']);
    }
  });

  test('a reader never sees the file empty or partial while callers race', async () => {
    const dir = await freshDir();
    const path = join(dir, 'watched.lease');
    const valid = new Set(Array.from({ length: 16 }, (_, i) => contentOf(i)));
    let stop = false;
    let reads = 0;
    const bad: number[] = [];
    const reader = (async () => {
      while (!stop) {
        try {
          const text = await readFile(path, 'utf8');
          reads++;
          if (!valid.has(text)) bad.push(text.length);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await Promise.all(Array.from({ length: 16 }, (_, i) => createExclusive(nodeMount, path, contentOf(i), `node-${i}`)));
    // Keep reading a little after the winner, so the check has something to see.
    while (reads < 5) await new Promise((resolve) => setImmediate(resolve));
    stop = true;
    await reader;
    assert.deepEqual(bad, [], 'every read saw one whole content');
  });

  test('while it works, the content sits in a hidden temp file that names the node', async () => {
    const dir = await freshDir();
    const path = join(dir, 'seen.lease');
    let during: string[] = [];
    type Link = (from: string, to: string) => Promise<void>;
    const restore = hookFsPromises<Link>('link', (original) => async (from, to) => {
      during = await readdir(dir);
      return original(from, to);
    });
    try {
      assert.equal(await createExclusive(nodeMount, path, 'x', 'ws1-100'), true);
    } finally {
      restore();
    }
    assert.equal(during.length, 1);
    assert.ok(during[0]!.startsWith('.seen.lease~'));
    assert.equal(tempOwner(during[0]!), 'ws1-100');
    assert.deepEqual(await readdir(dir), ['seen.lease']);
  });

  test('a missing directory rejects with ENOENT and creates nothing', async () => {
    const dir = await freshDir();
    await assert.rejects(createExclusive(nodeMount, join(dir, 'nope', 'x.lease'), 'x', 'ws1-100'), { code: 'ENOENT' });
    assert.deepEqual(await readdir(dir), []);
  });

  test('a failing link (not EEXIST/EPERM) is thrown and the temp file removed', async () => {
    const dir = await freshDir();
    type Link = (from: string, to: string) => Promise<void>;
    const restore = hookFsPromises<Link>('link', () => async () => {
      throw Object.assign(new Error('EIO: i/o error, link'), { code: 'EIO' });
    });
    try {
      await assert.rejects(createExclusive(nodeMount, join(dir, 'x.lease'), 'x', 'ws1-100'), { code: 'EIO' });
    } finally {
      restore();
    }
    assert.deepEqual(await readdir(dir), []);
  });

  test('a temporary file the failing mount would not let go is removed once it is back (no litter after a fault)', async () => {
    const dir = await freshDir();
    type Link = (from: string, to: string) => Promise<void>;
    // The link is lost on the way, and the removal of the temp fails too (a cut link).
    const restoreLink = hookFsPromises<Link>('link', () => async () => {
      throw Object.assign(new Error('EIO: i/o error, link'), { code: 'EIO' });
    });
    try {
      await leavesNoLitter(dir, 'ws1-100', () =>
        assert.rejects(createExclusive(nodeMount, join(dir, 'x.lease'), 'x', 'ws1-100'), { code: 'EIO' }),
      );
    } finally {
      restoreLink();
    }
  });

  test('EPERM from link (the sshfs loser) means someone else has it: false', async () => {
    const dir = await freshDir();
    type Link = (from: string, to: string) => Promise<void>;
    const restore = hookFsPromises<Link>('link', () => async () => {
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
    });
    try {
      assert.equal(await createExclusive(nodeMount, join(dir, 'x.lease'), 'x', 'ws1-100'), false);
    } finally {
      restore();
    }
    assert.deepEqual(await readdir(dir), []);
  });
});
