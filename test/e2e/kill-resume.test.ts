import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pagePath, startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, runCli, spawnCli, tempDir } from '../support/cli.js';
import { filesOf, listFiles, tempFiles } from '../support/data-files.js';
import { until } from '../support/until.js';

const HOSTS = 3;
const PAGES = 40;

/** Waits until `check` is true, polling. */
async function linksRecords(data: string): Promise<string[]> {
  return (await listFiles(data)).filter((f) => f.startsWith('links/') && f.endsWith('.json') && !f.split('/').pop()!.startsWith('.'));
}

/** Every visible record parses; returns how many there are. */
async function assertAllRecordsWhole(data: string): Promise<number> {
  const files = (await listFiles(data)).filter((f) => /^(links|errs)\//.test(f) && !f.split('/').pop()!.startsWith('.'));
  for (const f of files) JSON.parse(await readFile(join(data, f), 'utf8'));
  return files.length;
}

function assertComplete(site: LoopbackSite, data: string, present: readonly string[]): void {
  const have = new Set(present);
  for (let h = 0; h < HOSTS; h++) {
    for (let i = 0; i < PAGES; i++) {
      const f = filesOf(site.url(h, pagePath(i)));
      assert.ok(have.has(f.links), `missing links record of ${site.url(h, pagePath(i))} in ${data}`);
    }
  }
}

describe('a node killed with SIGKILL mid-crawl, then run again', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    site = await startGeneratedSite({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 4, crossLinks: 1, latencyMs: 25 });
    data = await tempDir();
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('no partial file is visible after the kill, and the rerun completes the crawl', async () => {
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const args = ['crawl', ...seeds, '--data', data.path, '--per-host', '2', '--concurrency', '6', ...FAST];
    const child = spawnCli(args);
    await until(async () => (await linksRecords(data.path)).length >= 25);
    child.kill('SIGKILL');
    const killed = await child.done;
    assert.equal(killed.signal, 'SIGKILL');
    const beforeRerun = new Map(site.counts);
    const visible = await assertAllRecordsWhole(data.path);
    assert.ok(visible >= 25 && visible < HOSTS * PAGES, `killed mid-crawl (${visible} records)`);

    const rerun = await runCli(args);
    assert.equal(rerun.code, 0, rerun.stderr);
    assertComplete(site, data.path, await linksRecords(data.path));
    assert.equal(await assertAllRecordsWhole(data.path), HOSTS * PAGES);
    // Only what was in flight at the kill may be fetched twice.
    let twice = 0;
    for (const [url, n] of site.counts) {
      assert.ok(n <= 2, `${url} fetched ${n} times`);
      if (n === 2 && (beforeRerun.get(url) ?? 0) === 1) twice++;
    }
    assert.ok(twice <= 6, `${twice} URLs fetched twice, more than were in flight`);
    assert.deepEqual(await tempFiles(data.path), [], "the rerun removes the dead node's temp files");
    const left = (await listFiles(data.path)).filter((f) => f.startsWith('hosts/') || f.startsWith('nodes/'));
    assert.deepEqual(left, [], "the rerun takes over and then releases the dead node's leases");
  });
});

describe('SIGTERM stops a node gracefully', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    site = await startGeneratedSite({ hosts: 2, pagesPerHost: 60, linksPerPage: 3, latencyMs: 40 });
    data = await tempDir();
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('within a few seconds, exit code 143, nothing left half-done, and a rerun finishes', async () => {
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const args = ['crawl', ...seeds, '--data', data.path, '--per-host', '1', ...FAST];
    const child = spawnCli(args);
    await until(async () => (await linksRecords(data.path)).length >= 10);
    const t0 = Date.now();
    child.kill('SIGTERM');
    const r = await child.done;
    assert.equal(r.code, 143, r.stderr);
    assert.ok(Date.now() - t0 < 8_000, 'stopped within the grace period');
    assert.match(r.stderr, /SIGTERM: stopping/);
    assert.deepEqual(await tempFiles(data.path), []);
    const left = (await listFiles(data.path)).filter((f) => f.startsWith('hosts/') || f.startsWith('nodes/'));
    assert.deepEqual(left, [], 'leases and the node record are released on a graceful stop');
    const rerun = await runCli(args);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.equal((await linksRecords(data.path)).length, 2 * 60);
    for (const [url, n] of site.counts) assert.equal(n, 1, `${url} fetched ${n} times`);
  });
});

describe('a node killed with URLs in its spill file (--frontier-memory 1), then run again', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let spill: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    site = await startGeneratedSite({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 4, crossLinks: 1, latencyMs: 25 });
    data = await tempDir();
    spill = await tempDir('mountcrawl-spill-root-');
  });
  after(async () => {
    await site.close();
    await data.cleanup();
    await spill.cleanup();
  });

  test('the rerun queues the spilled URLs again from the mount, completes, and removes both spill directories', async () => {
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const args = ['crawl', ...seeds, '--data', data.path, '--per-host', '1', '--frontier-memory', '1', '--spill-dir', spill.path, ...FAST];
    const child = spawnCli(args);
    await until(async () => (await readdir(spill.path)).length > 0 && (await linksRecords(data.path)).length >= 15);
    child.kill('SIGKILL');
    assert.equal((await child.done).signal, 'SIGKILL');
    const left = await readdir(spill.path);
    assert.equal(left.length, 1, 'the killed node left its spill directory');
    assert.match(left[0]!, /^mountcrawl-spill-\d+-/);
    assert.ok((await linksRecords(data.path)).length < HOSTS * PAGES, 'killed mid-crawl');

    const rerun = await runCli(args);
    assert.equal(rerun.code, 0, rerun.stderr);
    assertComplete(site, data.path, await linksRecords(data.path));
    for (const [url, n] of site.counts) assert.ok(n <= 2, `${url} fetched ${n} times`);
    assert.deepEqual(await readdir(spill.path), [], "the rerun removed the dead node's spill directory, and its own at its end");
  });
});
