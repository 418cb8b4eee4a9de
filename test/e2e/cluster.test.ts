import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { candidate, ownerOf } from '../../src/cluster/rendezvous.js';
import { generatedSite, pagePath } from '../../src/site/generated-site.js';
import { LoopbackSite, type SiteHost } from '../../src/site/site-server.js';
import { FAST, spawnCli, tempDir, type CliResult } from '../support/cli.js';
import { filesOf, listFiles, tempFiles } from '../support/data-files.js';
import { until } from '../support/until.js';

const HOSTS = 6;
const PAGES = 50;
const PER_HOST = 2;

async function records(data: string): Promise<string[]> {
  return (await listFiles(data)).filter((f) => /^(links|errs)\//.test(f) && !f.split('/').pop()!.startsWith('.'));
}

function pagesOf(r: CliResult): number {
  const m = /done \(\w+\): (\d+) pages?\b/.exec(r.stderr);
  assert.ok(m, `no summary in:\n${r.stderr}`);
  return Number(m[1]);
}

/** Every page of every host has a links record that parses; nothing else is left behind. */
async function assertCompleteAndClean(site: LoopbackSite, data: string): Promise<void> {
  const have = new Set(await records(data));
  for (let h = 0; h < HOSTS; h++) {
    for (let i = 0; i < PAGES; i++) {
      const f = filesOf(site.url(h, pagePath(i)));
      assert.ok(have.has(f.links), `missing ${site.url(h, pagePath(i))}`);
      JSON.parse(await readFile(join(data, f.links), 'utf8'));
    }
  }
  assert.deepEqual(await tempFiles(data), [], 'temp files left');
  const left = (await listFiles(data)).filter((f) => f.startsWith('hosts/') || f.startsWith('nodes/'));
  assert.deepEqual(left, [], 'leases or node records left');
  for (let h = 0; h < HOSTS; h++) {
    assert.ok(site.maxInFlight(h) <= PER_HOST, `host ${h} had ${site.maxInFlight(h)} requests in flight across nodes`);
  }
}

function duplicates(site: LoopbackSite): string[] {
  return [...site.counts].filter(([, n]) => n > 1).map(([u, n]) => `${u} x${n}`);
}

describe('several nodes on one data directory', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let seeds: string[];
  const args = (id: string): string[] => [
    'crawl',
    ...seeds,
    '--data',
    data.path,
    '--per-host',
    String(PER_HOST),
    '--concurrency',
    '4',
    '--node-id',
    id,
    ...FAST,
  ];

  /** Runs before each request is answered, when a test sets it (may hold the request back). */
  let before: ((req: IncomingMessage, host: SiteHost) => Promise<void>) | undefined;

  beforeEach(async () => {
    before = undefined;
    const options = { hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 5, crossLinks: 2 };
    let started: LoopbackSite | undefined;
    const handle = generatedSite(options, () => started!.hosts);
    started = await LoopbackSite.start({
      hosts: HOSTS,
      latencyMs: 20,
      handle: async (req, res, host, path) => {
        await before?.(req, host);
        return handle(req, res, host, path);
      },
    });
    site = started;
    data = await tempDir();
    seeds = site.hosts.map((h) => `${h.origin}/`);
  });
  afterEach(async () => {
    await site.close();
    await data.cleanup();
  });

  test('three nodes started together fetch every page exactly once, per-host limit held across nodes', async () => {
    const nodes = ['a', 'b', 'c'].map((id) => spawnCli(args(id)));
    const results = await Promise.all(nodes.map((n) => n.done));
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(duplicates(site), [], results.map((r) => r.stderr).join('\n---\n'));
    assert.equal(
      results.reduce((a, r) => a + pagesOf(r), 0),
      HOSTS * PAGES,
    );
    await assertCompleteAndClean(site, data.path);
  });

  test('SIGKILL one of three mid-crawl: the others take its hosts over and finish', async () => {
    const nodes = ['a', 'b', 'c'].map((id) => spawnCli(args(id)));
    await until(async () => (await records(data.path)).length >= 60);
    nodes[1]!.kill('SIGKILL');
    const results = await Promise.all(nodes.map((n) => n.done));
    assert.equal(results[1]!.signal, 'SIGKILL');
    assert.equal(results[0]!.code, 0, results[0]!.stderr);
    assert.equal(results[2]!.code, 0, results[2]!.stderr);
    // At most what the dead node had in flight (--concurrency 4) is fetched again.
    const dups = duplicates(site);
    assert.ok(dups.length <= 4, `duplicates: ${dups.join(', ')}`);
    await assertCompleteAndClean(site, data.path);
  });

  test('a node that joins mid-crawl takes over its share without duplicate fetches', async () => {
    // Rendezvous may give a node no host at all; pick a joiner id that owns some.
    const joinerId = ['c', 'd', 'e', 'f', 'g', 'h'].find((id) =>
      site.hosts.some((h) => ownerOf(h.hostDir, ['a', 'b', id].map(candidate)) === id),
    )!;
    const joinerHosts = new Set(
      site.hosts.filter((h) => ownerOf(h.hostDir, ['a', 'b', joinerId].map(candidate)) === joinerId).map((h) => h.index),
    );
    // Deterministic on a loaded machine (the joiner once found nothing left): after the first
    // 5 requests to each host the joiner will own, a and b get those hosts' pages slowly (one
    // per second per request slot), so that the pages are still there when a and b see the
    // joiner and hand the hosts over, however long that takes. Requests for a host whose lease
    // the joiner holds are answered at once (every node of a crawl sends the same User-Agent:
    // the lease tells who asks). No request is held indefinitely: a and b keep going.
    const leasedToJoiner = (hostDir: string): boolean => {
      try {
        return JSON.parse(readFileSync(join(data.path, 'hosts', `${hostDir}.lease`), 'utf8')).node === joinerId;
      } catch {
        return false;
      }
    };
    before = async (_req, host) => {
      if (!joinerHosts.has(host.index) || leasedToJoiner(host.hostDir)) return;
      const origin = `${host.origin}/`;
      const started = [...site.counts].filter(([u]) => u.startsWith(origin)).reduce((a, [, n]) => a + n, 0);
      if (started > 5) await new Promise((r) => setTimeout(r, 1_000));
    };
    const first = ['a', 'b'].map((id) => spawnCli(args(id)));
    await until(async () => (await records(data.path)).length >= 40);
    const joiner = spawnCli([
      'crawl',
      '--data',
      data.path,
      '--per-host',
      String(PER_HOST),
      '--concurrency',
      '4',
      '--node-id',
      joinerId,
      ...FAST,
    ]);
    const results = await Promise.all([...first, joiner].map((n) => n.done));
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(duplicates(site), [], results.map((r) => r.stderr).join('\n---\n'));
    assert.ok(pagesOf(results[2]!) > 0, 'the joiner crawled nothing');
    await assertCompleteAndClean(site, data.path);
  });
});
