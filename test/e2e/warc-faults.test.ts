import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FAST, runCli, spawnCli } from '../support/cli.js';
import { errorLines, useFaultRig, visibleRecords } from '../support/fault-rig.js';
import { until } from '../support/until.js';
import { checkWarcDir, responsePairs } from '../support/warc-check.js';

const HOSTS = 3;
const PAGES = 60;

async function linksCount(data: string): Promise<number> {
  return (await visibleRecords(data, /^links\//)).length;
}

describe('--warc on a failing data directory', { timeout: 180_000 }, () => {
  const rig = useFaultRig({ hosts: HOSTS, pagesPerHost: PAGES });

  const crawl = (...extra: string[]): string[] => [
    'crawl',
    ...rig.seeds,
    '--data',
    rig.data,
    '--warc',
    '--per-host',
    '2',
    ...FAST,
    ...extra,
  ];

  test('a full disk stops capture like html writes: one clear line, exit 4; what is there reads; a rerun with room completes', async (t) => {
    if (rig.skip) return t.skip(rig.skip);
    rig.fs.remount('size=256k');
    const r = await runCli(crawl('--mount-retry', '1'));
    assert.equal(r.code, 4, r.stderr);
    const errors = errorLines(r.stderr);
    assert.match(errors[0] ?? '', /^mountcrawl: DISK_FULL: .*fetching paused/);
    assert.match(errors.at(-1) ?? '', /^mountcrawl: DISK_FULL: .*gave up after 1 s/);
    // Every complete record reads, the index points inside its file (a torn tail may remain).
    await checkWarcDir(join(rig.data, 'warc'), { allowOpen: true, allowTail: true });
    rig.fs.remount('size=64m');
    const again = await runCli(crawl());
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await linksCount(rig.data), HOSTS * PAGES);
    const set = await checkWarcDir(join(rig.data, 'warc'));
    const warc = responsePairs(set);
    for (const h of rig.site.hosts) assert.ok(warc.has(`${h.origin}/ 200`));
  });

  test('read-only for longer than --mount-retry: exit 4 READ_ONLY; rw again, the rerun closes the file and completes', async (t) => {
    if (rig.skip) return t.skip(rig.skip);
    const child = spawnCli(crawl('--mount-retry', '1'));
    await until(async () => (await linksCount(rig.data)) >= 30);
    rig.fs.remount('ro');
    const r = await child.done;
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr.split('\n').find((l) => l.startsWith('mountcrawl: ')) ?? '', /^mountcrawl: READ_ONLY: /);
    await checkWarcDir(join(rig.data, 'warc'), { allowOpen: true, allowTail: true });
    rig.fs.remount('rw');
    const again = await runCli(crawl());
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await linksCount(rig.data), HOSTS * PAGES);
    await checkWarcDir(join(rig.data, 'warc'));
  });
});
