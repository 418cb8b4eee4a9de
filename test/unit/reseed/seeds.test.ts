import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hasSeeds, writeSeeds } from '../../../src/reseed/seeds.js';
import { systemClock } from '../../../src/config/clock.js';
import { Layout } from '../../../src/store/layout.js';
import { Mount } from '../../../src/store/mount.js';
import { nodeMountFs } from '../../../src/store/node-mount-fs.js';
import { urlKey } from '../../../src/url/key.js';

let root: string;
let counter = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mountcrawl-seeds-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshLayout(withSeedsDir = true): Promise<Layout> {
  const layout = new Layout(join(root, `t${counter++}`));
  await mkdir(withSeedsDir ? layout.dir('seeds') : layout.root, { recursive: true });
  return layout;
}

describe('writeSeeds', () => {
  test('one seeds/<key>.url file per URL, holding the URL and a newline; no temp left', async () => {
    const layout = await freshLayout();
    const urls = ['http://example.org/', 'https://example.com/a?b=1'];
    await writeSeeds(layout, urls, 'ws1-100');
    assert.deepEqual((await readdir(layout.dir('seeds'))).sort(), urls.map((u) => `${urlKey(u)}.url`).sort());
    for (const u of urls) assert.equal(await readFile(layout.seed(urlKey(u)), 'utf8'), `${u}\n`);
  });

  test('a seed already there is not written again (one file per URL, left as it is)', async () => {
    const layout = await freshLayout();
    await writeSeeds(layout, ['http://example.org/'], 'ws1-100');
    const before = await stat(layout.seed(urlKey('http://example.org/')));
    await writeSeeds(layout, ['http://example.org/', 'http://example.org/', 'http://example.org/b'], 'ws2-200');
    assert.deepEqual(
      (await readdir(layout.dir('seeds'))).sort(),
      [`${urlKey('http://example.org/')}.url`, `${urlKey('http://example.org/b')}.url`].sort(),
    );
    assert.equal((await stat(layout.seed(urlKey('http://example.org/')))).ino, before.ino, 'not replaced by a rename');
  });

  test('a missing seeds/ directory is an error, not created', async () => {
    const layout = await freshLayout(false);
    await assert.rejects(writeSeeds(layout, ['http://example.org/'], 'ws1-100'), { code: 'ENOENT' });
    assert.deepEqual(await readdir(layout.root), []);
  });
});

describe('hasSeeds', () => {
  test('false without seeds/, when empty, or with only other files; true with one seed', async () => {
    assert.equal(await hasSeeds(await freshLayout(false)), false);
    const layout = await freshLayout();
    assert.equal(await hasSeeds(layout), false);
    await writeFile(join(layout.dir('seeds'), 'notes.txt'), 'http://example.org/');
    await writeFile(join(layout.dir('seeds'), `.${'a'.repeat(56)}.url~n~zz01.tmp`), 'http://example.org/');
    assert.equal(await hasSeeds(layout), false);
    await writeSeeds(layout, ['http://example.org/'], 'ws1-100');
    assert.equal(await hasSeeds(layout), true);
  });

  test('a listing that fails otherwise (EIO: the mount) is thrown, not taken for "no seeds"', async () => {
    const eio = Object.assign(new Error('EIO: i/o error, scandir'), { code: 'EIO' });
    const failing = new Mount({ ...nodeMountFs, readdir: () => Promise.reject(eio) }, systemClock);
    await assert.rejects(hasSeeds(new Layout((await freshLayout()).root, failing)), { code: 'EIO' });
  });
});
