import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, runCli, spawnCli, tempDir } from '../support/cli.js';
import { listFiles } from '../support/data-files.js';
import { Tmpfs } from '../support/tmpfs.js';

const HOSTS = 3;
const PAGES = 100;

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function visibleRecords(data: string): Promise<string[]> {
  return (await listFiles(data)).filter((f) => /^(links|errs)\//.test(f) && !f.split('/').pop()!.startsWith('.'));
}

/** Invariant 1: every record a reader can see is whole. */
async function assertRecordsWhole(data: string): Promise<number> {
  const files = await visibleRecords(data);
  for (const f of files) JSON.parse(await readFile(join(data, f), 'utf8'));
  return files.length;
}

/** The error lines a node printed (summary lines aside). */
function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('mountcrawl: ') && !l.startsWith('mountcrawl: warning:'));
}

describe('faults of the data directory', { timeout: 120_000 }, () => {
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
    site.counts.clear();
  });
  afterEach(() => {
    if (skip === undefined) fs.unmount();
  });

  const crawl = (...extra: string[]): string[] => ['crawl', ...seeds, '--data', data, '--per-host', '2', ...FAST, ...extra];

  test('a full disk: one clear line, exit 4, nothing partial; a rerun with room completes', async (t) => {
    if (skip) return t.skip(skip);
    fs.remount('size=192k');
    const r = await runCli(crawl('--mount-retry', '1'));
    assert.equal(r.code, 4, r.stderr);
    const errors = errorLines(r.stderr);
    assert.match(errors[0] ?? '', /^mountcrawl: DISK_FULL: .*fetching paused/);
    assert.match(errors.at(-1) ?? '', /^mountcrawl: DISK_FULL: .*gave up after 1 s/);
    const kept = await assertRecordsWhole(data);
    assert.ok(kept > 0 && kept < HOSTS * PAGES, `${kept} records`);
    fs.remount('size=64m');
    const again = await runCli(crawl());
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await assertRecordsWhole(data), HOSTS * PAGES);
  });

  test('turning read-only for longer than --mount-retry: exit 4 READ_ONLY; rw again, a rerun completes', async (t) => {
    if (skip) return t.skip(skip);
    const child = spawnCli(crawl('--mount-retry', '1'));
    await until(async () => (await visibleRecords(data).catch(() => [])).length >= 30);
    fs.remount('ro');
    const r = await child.done;
    assert.equal(r.code, 4, r.stderr);
    assert.match(errorLines(r.stderr)[0] ?? '', /^mountcrawl: READ_ONLY: /);
    await assertRecordsWhole(data);
    fs.remount('rw');
    const again = await runCli(crawl());
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await assertRecordsWhole(data), HOSTS * PAGES);
  });

  test('read-only for a moment: the node waits, then carries on and completes', async (t) => {
    if (skip) return t.skip(skip);
    const child = spawnCli(crawl('--mount-retry', '30'));
    await until(async () => (await visibleRecords(data).catch(() => [])).length >= 30);
    fs.remount('ro');
    await until(() => /READ_ONLY/.test(child.stderrSoFar()), 10_000);
    await new Promise((r) => setTimeout(r, 500));
    fs.remount('rw');
    const r = await child.done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /the mount is back/);
    assert.equal(await assertRecordsWhole(data), HOSTS * PAGES);
  });

  test('the data directory removed mid-crawl: MOUNT_LOST, exit 4, and it is not created again', async (t) => {
    if (skip) return t.skip(skip);
    const child = spawnCli(crawl('--mount-retry', '1'));
    await until(async () => (await visibleRecords(data).catch(() => [])).length >= 30);
    // Renamed away first, so the node cannot write into it while it is being deleted.
    await rename(data, `${data}.gone`);
    await rm(`${data}.gone`, { recursive: true, force: true });
    const r = await child.done;
    assert.equal(r.code, 4, r.stderr);
    assert.match(errorLines(r.stderr)[0] ?? '', /^mountcrawl: MOUNT_LOST: /);
    assert.ok(!existsSync(data), 'the node rebuilt the data directory where the mount was');
  });
});
