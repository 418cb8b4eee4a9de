import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FAST, runCli, spawnCli } from '../support/cli.js';
import { errorLines, useFaultRig, visibleRecords } from '../support/fault-rig.js';
import { until } from '../support/until.js';

const HOSTS = 3;
const PAGES = 100;

/** Invariant 1: every record a reader can see is whole. */
async function assertRecordsWhole(data: string): Promise<number> {
  const files = await visibleRecords(data);
  for (const f of files) JSON.parse(await readFile(join(data, f), 'utf8'));
  return files.length;
}

describe('faults of the data directory', { timeout: 120_000 }, () => {
  const rig = useFaultRig({ hosts: HOSTS, pagesPerHost: PAGES });

  const crawl = (...extra: string[]): string[] => ['crawl', ...rig.seeds, '--data', rig.data, '--per-host', '2', ...FAST, ...extra];

  test('a full disk: one clear line, exit 4, nothing partial; a rerun with room completes', async (t) => {
    if (rig.skip) return t.skip(rig.skip);
    rig.fs.remount('size=192k');
    const r = await runCli(crawl('--mount-retry', '1'));
    assert.equal(r.code, 4, r.stderr);
    const errors = errorLines(r.stderr);
    assert.match(errors[0] ?? '', /^mountcrawl: DISK_FULL: .*fetching paused/);
    assert.match(errors.at(-1) ?? '', /^mountcrawl: DISK_FULL: .*gave up after 1 s/);
    const kept = await assertRecordsWhole(rig.data);
    assert.ok(kept > 0 && kept < HOSTS * PAGES, `${kept} records`);
    rig.fs.remount('size=64m');
    const again = await runCli(crawl());
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await assertRecordsWhole(rig.data), HOSTS * PAGES);
  });

  test('turning read-only for longer than --mount-retry: exit 4 READ_ONLY; rw again, a rerun completes', async (t) => {
    if (rig.skip) return t.skip(rig.skip);
    const child = spawnCli(crawl('--mount-retry', '1'));
    await until(async () => (await visibleRecords(rig.data)).length >= 30, 20_000);
    rig.fs.remount('ro');
    const r = await child.done;
    assert.equal(r.code, 4, r.stderr);
    assert.match(errorLines(r.stderr)[0] ?? '', /^mountcrawl: READ_ONLY: /);
    await assertRecordsWhole(rig.data);
    rig.fs.remount('rw');
    const again = await runCli(crawl());
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await assertRecordsWhole(rig.data), HOSTS * PAGES);
  });

  test('read-only for a moment: the node waits, then carries on and completes', async (t) => {
    if (rig.skip) return t.skip(rig.skip);
    const child = spawnCli(crawl('--mount-retry', '30'));
    await until(async () => (await visibleRecords(rig.data)).length >= 30, 20_000);
    rig.fs.remount('ro');
    await until(() => /READ_ONLY/.test(child.stderrSoFar()), 10_000);
    await new Promise((r) => setTimeout(r, 500));
    rig.fs.remount('rw');
    const r = await child.done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /the mount is back/);
    assert.equal(await assertRecordsWhole(rig.data), HOSTS * PAGES);
  });

  test('the data directory removed mid-crawl: MOUNT_LOST, exit 4, and it is not created again', async (t) => {
    if (rig.skip) return t.skip(rig.skip);
    const child = spawnCli(crawl('--mount-retry', '1'));
    await until(async () => (await visibleRecords(rig.data)).length >= 30, 20_000);
    // Renamed away first, so the node cannot write into it while it is being deleted.
    await rename(rig.data, `${rig.data}.gone`);
    await rm(`${rig.data}.gone`, { recursive: true, force: true });
    const r = await child.done;
    assert.equal(r.code, 4, r.stderr);
    assert.match(errorLines(r.stderr)[0] ?? '', /^mountcrawl: MOUNT_LOST: /);
    assert.ok(!existsSync(rig.data), 'the node rebuilt the data directory where the mount was');
  });
});
