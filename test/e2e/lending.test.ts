import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { candidate, ownerOf } from '../../src/cluster/rendezvous.js';
import { generatedSite, pagePath } from '../../src/site/generated-site.js';
import { LoopbackSite } from '../../src/site/site-server.js';
import { Layout } from '../../src/store/layout.js';
import { FAST, jsonSummary, spawnCli, tempDir } from '../support/cli.js';
import { filesOf, listFiles, tempFiles } from '../support/data-files.js';
import { until } from '../support/until.js';

const HOSTS = 8;
const PAGES = 40;
/** Ids tried for the two nodes: the first pair where rendezvous hashing gives the second no host of the site. */
const BUSY_IDS = Array.from({ length: 200 }, (_, i) => `busy${i}`);
const IDLE_IDS = Array.from({ length: 2000 }, (_, i) => `idle${i}`);

interface Summary {
  readonly pages: number;
  readonly hostsLent?: number;
}

/**
 * Two nodes, one of which rendezvous hashing gives no host of the site: without lending it
 * fetches nothing and the other does all the work; with lending (the default) the busy node
 * lends it hosts waiting for a request slot (docs/protocol.md, "Lending hosts").
 */
async function crawlPair(
  extra: readonly string[],
  latencyMs = 30,
): Promise<{ site: LoopbackSite; busy: Summary; idle: Summary & { stderr: string }; cleanup: () => Promise<void> }> {
  let started: LoopbackSite | undefined;
  const handle = generatedSite({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 5, crossLinks: 1 }, () => started!.hosts);
  const site = await LoopbackSite.start({ hosts: HOSTS, latencyMs, handle });
  started = site;
  const data = await tempDir();
  try {
    return { ...(await crawlOn(site, data.path, extra)), site, cleanup: data.cleanup };
  } catch (err) {
    await site.close();
    await data.cleanup();
    throw err;
  }
}

async function crawlOn(
  site: LoopbackSite,
  dataDir: string,
  extra: readonly string[],
): Promise<{ busy: Summary; idle: Summary & { stderr: string } }> {
  const dirs = site.hosts.map((h) => h.hostDir);
  // A pair where the second id wins no host: about one idle id in 3,000 for a given busy id
  // (the product of the busy id's 8 chances), so several busy ids are tried.
  let busyId = '';
  let idleId: string | undefined;
  const idles = IDLE_IDS.map(candidate);
  for (const b of BUSY_IDS) {
    busyId = b;
    const busy = candidate(b);
    idleId = idles.find((c) => dirs.every((d) => ownerOf(d, [busy, c]) === b))?.id;
    if (idleId !== undefined) break;
  }
  assert.ok(idleId !== undefined, 'no pair of ids where one owns no host');
  const data = { path: dataDir };
  const args = (id: string): string[] => [
    'crawl',
    ...site.hosts.map((h) => `${h.origin}/`),
    '--data',
    data.path,
    '--per-host',
    '1',
    '--concurrency',
    '2',
    '--node-id',
    id,
    '--json',
    ...FAST,
    ...extra,
  ];
  // The idle node starts once the busy one has a node record: its first look at nodes/ then
  // sees a peer, and it never owns (and fetches) a host, as a node started alone would for
  // a moment (docs/protocol.md, "Nodes and liveness").
  const busyRun = spawnCli(args(busyId));
  await until(
    () =>
      access(new Layout(dataDir).node(busyId)).then(
        () => true,
        () => false,
      ),
    60_000,
  );
  const idleRun = spawnCli(args(idleId));
  const [busy, idle] = await Promise.all([busyRun.done, idleRun.done]);
  assert.equal(busy!.code, 0, busy!.stderr);
  assert.equal(idle!.code, 0, idle!.stderr);
  // Every page once, never more than --per-host requests at once on a host, nothing left behind.
  const perHost = extra.includes('--per-host') ? Number(extra[extra.indexOf('--per-host') + 1]) : 1;
  const files = await listFiles(data.path);
  const have = new Set(files);
  for (let h = 0; h < HOSTS; h++) {
    for (let i = 0; i < PAGES; i++) assert.ok(have.has(filesOf(site.url(h, pagePath(i))).links), `missing ${site.url(h, pagePath(i))}`);
    assert.ok(site.maxInFlight(h) <= perHost, `host ${h} had ${site.maxInFlight(h)} requests in flight`);
  }
  assert.deepEqual(
    [...site.counts].filter(([, n]) => n > 1),
    [],
    'fetched twice',
  );
  assert.deepEqual(await tempFiles(data.path), [], 'temp files left');
  assert.deepEqual(
    files.filter((f) => f.startsWith('hosts/') || f.startsWith('nodes/') || /^handoff\/.+\.json$/.test(f)),
    [],
    'leases, node records or hand-offs left',
  );
  return { busy: jsonSummary<Summary>(busy!), idle: { ...jsonSummary<Summary>(idle!), stderr: idle!.stderr } };
}

describe('lending hosts', { timeout: 120_000 }, () => {
  test('a node that owns no host borrows hosts waiting for a slot: every page once, per-host held', async () => {
    const r = await crawlPair([]);
    try {
      assert.ok((r.busy.hostsLent ?? 0) > 0, `the busy node lent nothing: ${JSON.stringify(r.busy)}`);
      assert.ok(r.idle.pages > 0, 'the node with no host of its own fetched nothing');
      assert.equal(r.busy.pages + r.idle.pages, HOSTS * PAGES);
    } finally {
      await r.site.close();
      await r.cleanup();
    }
  });

  test('no host waits for a slot (--concurrency 32 --per-host 2): the node that owns no host still gets one, and says once why it had none', async () => {
    // Slow answers: the busy node still crawls when the idle one has started, however loaded the machine.
    const r = await crawlPair(['--concurrency', '32', '--per-host', '2'], 200);
    try {
      assert.ok((r.busy.hostsLent ?? 0) > 0, `the busy node lent nothing: ${JSON.stringify(r.busy)}`);
      assert.ok(r.idle.pages > 0, 'the node with no host of its own fetched nothing');
      assert.equal(r.idle.stderr.match(/this node owns no host/g)?.length, 1, r.idle.stderr);
    } finally {
      await r.site.close();
      await r.cleanup();
    }
  });

  test('--no-lend: the node that owns no host fetches nothing', async () => {
    const r = await crawlPair(['--no-lend']);
    try {
      assert.equal(r.busy.hostsLent, undefined);
      assert.equal(r.idle.pages, 0);
      assert.match(r.idle.stderr, /this node owns no host: .*lending is off/);
      assert.equal(r.busy.pages, HOSTS * PAGES);
    } finally {
      await r.site.close();
      await r.cleanup();
    }
  });
});
