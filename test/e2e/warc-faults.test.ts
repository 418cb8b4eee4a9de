import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, runCli, spawnCli, tempDir } from '../support/cli.js';
import { listFiles } from '../support/data-files.js';
import { Tmpfs } from '../support/tmpfs.js';
import { checkWarcDir, responsePairs } from '../support/warc-check.js';

const HOSTS = 3;
const PAGES = 60;

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function linksCount(data: string): Promise<number> {
  return (await listFiles(data).catch(() => [])).filter((f) => f.startsWith('links/') && !f.split('/').pop()!.startsWith('.')).length;
}

describe('--warc on a failing data directory', { timeout: 180_000 }, () => {
  let site: LoopbackSite;
  let tmp: { path: string; cleanup: () => Promise<void> };
  let fs: Tmpfs;
  let skip: string | undefined;
  let data: string;
  let seeds: string[];

  before(async () => {
    site = await startGeneratedSite({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 3, latencyMs: 15 });
    seeds = site.hosts.map((h) => `${h.origin}/`);
    tmp = await tempDir();
  });
  after(async () => {
    await site.close();
    await tmp.cleanup();
  });
  beforeEach(async () => {
    fs = new Tmpfs(join(tmp.path, `mnt-${Date.now()}`));
    skip = await fs.mount(64 * 1024);
    data = join(fs.path, 'data');
  });
  afterEach(() => {
    if (skip === undefined) fs.unmount();
  });

  const crawl = (...extra: string[]): string[] => ['crawl', ...seeds, '--data', data, '--warc', '--per-host', '2', ...FAST, ...extra];

  test('a full disk stops capture like html writes: one clear line, exit 4; what is there reads; a rerun with room completes', async (t) => {
    if (skip) return t.skip(skip);
    fs.remount('size=256k');
    const r = await runCli(crawl('--mount-retry', '1'));
    assert.equal(r.code, 4, r.stderr);
    const errors = r.stderr.split('\n').filter((l) => l.startsWith('mountcrawl: ') && !l.startsWith('mountcrawl: warning:'));
    assert.match(errors[0] ?? '', /^mountcrawl: DISK_FULL: .*fetching paused/);
    assert.match(errors.at(-1) ?? '', /^mountcrawl: DISK_FULL: .*gave up after 1 s/);
    // Every complete record reads, the index points inside its file (a torn tail may remain).
    await checkWarcDir(join(data, 'warc'), { allowOpen: true, allowTail: true });
    fs.remount('size=64m');
    const again = await runCli(crawl());
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await linksCount(data), HOSTS * PAGES);
    const set = await checkWarcDir(join(data, 'warc'));
    const warc = responsePairs(set);
    for (const h of site.hosts) assert.ok(warc.has(`${h.origin}/ 200`));
  });

  test('read-only for longer than --mount-retry: exit 4 READ_ONLY; rw again, the rerun closes the file and completes', async (t) => {
    if (skip) return t.skip(skip);
    const child = spawnCli(crawl('--mount-retry', '1'));
    await until(async () => (await linksCount(data)) >= 30);
    fs.remount('ro');
    const r = await child.done;
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr.split('\n').find((l) => l.startsWith('mountcrawl: ')) ?? '', /^mountcrawl: READ_ONLY: /);
    await checkWarcDir(join(data, 'warc'), { allowOpen: true, allowTail: true });
    fs.remount('rw');
    const again = await runCli(crawl());
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await linksCount(data), HOSTS * PAGES);
    await checkWarcDir(join(data, 'warc'));
  });
});
