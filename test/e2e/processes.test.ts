import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { pagePath, startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, spawnCli, tempDir } from '../support/cli.js';
import { filesOf, listFiles, tempFiles } from '../support/data-files.js';
import { until } from '../support/until.js';

const HOSTS = 4;
const PAGES = 50;

async function nodeRecords(data: string): Promise<{ id: string; pid: number }[]> {
  const out: { id: string; pid: number }[] = [];
  for (const name of await readdir(join(data, 'nodes')).catch(() => [] as string[])) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    try {
      out.push(JSON.parse(await readFile(join(data, 'nodes', name), 'utf8')) as { id: string; pid: number });
    } catch {
      // being replaced
    }
  }
  return out;
}

async function assertComplete(site: LoopbackSite, data: string): Promise<void> {
  const files = new Set(await listFiles(data));
  for (let h = 0; h < HOSTS; h++) {
    for (let i = 0; i < PAGES; i++) assert.ok(files.has(filesOf(site.url(h, pagePath(i))).links), `missing ${site.url(h, pagePath(i))}`);
  }
  assert.deepEqual(await tempFiles(data), []);
  assert.deepEqual(
    [...files].filter((f) => f.startsWith('hosts/') || f.startsWith('nodes/')),
    [],
  );
}

describe('--processes N: one command, N nodes on this machine', { timeout: 120_000 }, () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let seeds: string[];
  beforeEach(async () => {
    site = await startGeneratedSite({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 4, crossLinks: 1, latencyMs: 25 });
    data = await tempDir();
    seeds = site.hosts.map((h) => `${h.origin}/`);
  });
  afterEach(async () => {
    await site.close();
    await data.cleanup();
  });

  test('two nodes complete the crawl with no duplicate fetch', async () => {
    const r = await spawnCli(['crawl', ...seeds, '--data', data.path, '--processes', '2', ...FAST]).done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /all 2 nodes ended: 200 pages/);
    assert.deepEqual(
      [...site.counts].filter(([, n]) => n > 1),
      [],
    );
    await assertComplete(site, data.path);
  });

  test('a second run on a complete directory says the crawl was already complete, not "owned no host"', async () => {
    const first = await spawnCli(['crawl', ...seeds, '--data', data.path, '--processes', '2', ...FAST]).done;
    assert.equal(first.code, 0, first.stderr);
    const again = await spawnCli(['crawl', ...seeds, '--data', data.path, '--processes', '2', ...FAST]).done;
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /owned no host/, again.stderr);
    assert.match(
      again.stderr,
      /^mountcrawl: nothing left to fetch: the crawl was already complete \(200 pages in the data directory\)/m,
      again.stderr,
    );
  });

  test('a child that crashes is started again and the crawl still completes', async () => {
    const sup = spawnCli(['crawl', ...seeds, '--data', data.path, '--processes', '2', '--per-host', '1', ...FAST]);
    await until(async () => (await nodeRecords(data.path)).length === 2);
    await until(async () => (await listFiles(data.path)).filter((f) => f.startsWith('links/')).length >= 20);
    const victim = (await nodeRecords(data.path))[0]!;
    process.kill(victim.pid, 'SIGKILL');
    const r = await sup.done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /killed by SIGKILL; restarting/);
    assert.equal(r.stderr.match(/restarting in/g)?.length, 1, 'one restart');
    assert.match(r.stderr, /exit codes 0, 0/);
    await assertComplete(site, data.path);
  });

  test('SIGINT stops every node gracefully; the exit code says so', async () => {
    const sup = spawnCli(['crawl', ...seeds, '--data', data.path, '--processes', '2', '--per-host', '1', ...FAST]);
    await until(async () => (await listFiles(data.path)).filter((f) => f.startsWith('links/')).length >= 10);
    sup.kill('SIGINT');
    const r = await sup.done;
    assert.equal(r.code, 130, r.stderr);
    assert.deepEqual(await tempFiles(data.path), []);
    const left = (await listFiles(data.path)).filter((f) => f.startsWith('hosts/') || f.startsWith('nodes/'));
    assert.deepEqual(left, [], 'leases and node records released');
  });
});
