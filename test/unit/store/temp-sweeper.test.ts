import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DIRS, Layout } from '../../../src/store/layout.js';
import { sweepStaleTemps } from '../../../src/store/temp-sweeper.js';

const MAX_AGE = 150_000;
/** The mount's clock as this test pretends the server gave it (seconds, so mtimes are exact). */
const SERVER_NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

let root: string;
let counter = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mountcrawl-sweeper-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshLayout(): Promise<Layout> {
  const layout = new Layout(join(root, `t${counter++}`));
  for (const d of Object.values(DIRS)) await mkdir(join(layout.root, d), { recursive: true });
  return layout;
}

/** Creates a file whose mtime is `ageMs` before SERVER_NOW. */
async function fileAged(path: string, ageMs: number): Promise<void> {
  await writeFile(path, 'x');
  const t = (SERVER_NOW - ageMs) / 1000;
  await utimes(path, t, t);
}

describe('sweepStaleTemps', () => {
  test('removes old temp files in nodes/, hosts/, seeds/ and robots/ only; keeps young ones and records', async () => {
    const layout = await freshLayout();
    const old = MAX_AGE + 1_000;
    const young = MAX_AGE - 1_000;
    const oldTemps = [
      join(layout.dir('nodes'), '.ws2-200.json~ws2-200~zz0001.tmp'),
      join(layout.dir('hosts'), '.example.org.lease~ws2-200~zz0002.tmp'),
      join(layout.dir('seeds'), `.${'a'.repeat(56)}.url~ws2-200~zz0003.tmp`),
      join(layout.dir('robots'), '.example.org.txt~ws2-200~zz0004.tmp'),
    ];
    const kept = [
      join(layout.dir('nodes'), '.ws3-300.json~ws3-300~zz0005.tmp'), // young
      join(layout.dir('nodes'), 'ws2-200.json'), // a record, however old
      join(layout.dir('hosts'), 'example.org.lease'),
      join(layout.dir('nodes'), '.hidden-but-not-temp'),
    ];
    for (const p of oldTemps) await fileAged(p, old);
    await fileAged(kept[0]!, young);
    for (const p of kept.slice(1)) await fileAged(p, old);
    // Per-host directories belong to the host's owner: never swept here.
    await mkdir(layout.hostDir('links', 'example.org'));
    const hostTemp = join(layout.hostDir('links', 'example.org'), `.${'b'.repeat(56)}.json~ws2-200~zz0006.tmp`);
    await fileAged(hostTemp, old);

    assert.equal(await sweepStaleTemps(layout, SERVER_NOW, MAX_AGE), oldTemps.length);
    for (const p of oldTemps) await assert.rejects(stat(p), { code: 'ENOENT' }, p);
    for (const p of [...kept, hostTemp]) assert.ok((await stat(p)).isFile(), p);
    assert.equal(await sweepStaleTemps(layout, SERVER_NOW, MAX_AGE), 0, 'nothing more the second time');
  });

  test('age is measured against the mount clock given, not this machine', async () => {
    const layout = await freshLayout();
    const temp = join(layout.dir('hosts'), '.h.example.lease~ws2-200~zz0001.tmp');
    await fileAged(temp, 10_000);
    assert.equal(await sweepStaleTemps(layout, SERVER_NOW, MAX_AGE), 0);
    assert.equal(await sweepStaleTemps(layout, SERVER_NOW + MAX_AGE, MAX_AGE), 1);
    assert.deepEqual(await readdir(layout.dir('hosts')), []);
  });

  test("a temp file of a writer that is gone goes at once, whatever its age; a live writer's young one stays", async () => {
    const layout = await freshLayout();
    const deadOwners = join(layout.dir('robots'), '.example.org.txt~n3~zz0001.tmp');
    const live = join(layout.dir('robots'), '.example.net.txt~n2~zz0002.tmp');
    await fileAged(deadOwners, 1_000);
    await fileAged(live, 1_000);
    assert.equal(await sweepStaleTemps(layout, SERVER_NOW, MAX_AGE, (id) => id === 'n3'), 1);
    assert.deepEqual(await readdir(layout.dir('robots')), ['.example.net.txt~n2~zz0002.tmp']);
  });

  test('missing directories are skipped', async () => {
    const layout = new Layout(join(root, `t${counter++}`));
    await mkdir(join(layout.root, 'hosts'), { recursive: true });
    const temp = join(layout.dir('hosts'), '.h.example.lease~ws2-200~zz0001.tmp');
    await fileAged(temp, MAX_AGE * 2);
    assert.equal(await sweepStaleTemps(layout, SERVER_NOW, MAX_AGE), 1);
  });
});
