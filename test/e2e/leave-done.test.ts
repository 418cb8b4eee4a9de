import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { candidate, ownerOf } from '../../src/cluster/rendezvous.js';
import { generatedSite } from '../../src/site/generated-site.js';
import { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, type CliResult, jsonSummary, spawnCli, tempDir } from '../support/cli.js';
import { listFiles } from '../support/data-files.js';

const HOSTS = 6;
const PAGES = 30;
const IDS = ['n1', 'n2', 'n3'];

/** Links records a node read in its reseeds, from its --json summary line. */
function recordsRead(r: CliResult): number {
  return jsonSummary<{ discovery: { recordsRead: number } }>(r).discovery.recordsRead;
}

/** The node records on the mount now. */
async function records(data: string): Promise<{ id: string; state: string; pages: number }[]> {
  const out: { id: string; state: string; pages: number }[] = [];
  for (const name of await readdir(join(data, 'nodes')).catch(() => [] as string[])) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    try {
      out.push(JSON.parse(await readFile(join(data, 'nodes', name), 'utf8')) as { id: string; state: string; pages: number });
    } catch {
      // replaced or removed meanwhile
    }
  }
  return out;
}

/**
 * A node that ends by the rule leaves a `done` record (docs/protocol.md, "Leaving done"):
 * the others read its inbox instead of every links record. A node killed, even one whose
 * last record says idle, still makes the others reseed fully, and nothing is lost.
 */
describe('leaving done', { timeout: 240_000 }, () => {
  let site: LoopbackSite;
  let expected: string[];
  /** While set, pages wait (at most 20 s) until every node record is in this data directory, and then 300 ms more. */
  let holdFor: string | undefined;
  let gate: { data: string; open: Promise<void> } | undefined;
  function held(): Promise<void> {
    const data = holdFor;
    if (data === undefined) return Promise.resolve();
    if (gate?.data !== data) {
      const deadline = performance.now() + 20_000;
      const joined = (): boolean => IDS.every((id) => existsSync(join(data, 'nodes', `${id}.json`)));
      const open = (async () => {
        while (!joined() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 300));
      })();
      gate = { data, open };
    }
    return gate.open;
  }
  before(async () => {
    const handle = generatedSite({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 4, crossLinks: 2 }, () => site.hosts);
    site = await LoopbackSite.start({
      hosts: HOSTS,
      latencyMs: 30,
      handle: async (req, res, host, path) => {
        await held();
        return handle(req, res, host, path);
      },
    });
    const reference = await tempDir();
    const alone = await spawnCli(['crawl', ...seeds(), '--data', reference.path, '--scope', 'any', ...FAST]).done;
    assert.equal(alone.code, 0, alone.stderr);
    expected = (await listFiles(reference.path)).filter((f) => f.startsWith('links/'));
    await reference.cleanup();
    assert.equal(expected.length, HOSTS * PAGES, 'the reference crawl reached every page');
  });
  after(async () => {
    await site.close();
  });

  const seeds = (): string[] => site.hosts.map((h) => `${h.origin}/`);
  const args = (data: string, id: string): string[] => [
    'crawl',
    ...seeds(),
    '--data',
    data,
    '--node-id',
    id,
    '--scope',
    'any',
    '--per-host',
    '1',
    '--concurrency',
    '4',
    '--json',
    ...FAST,
  ];

  /**
   * Three node ids among which rendezvous hashing gives one exactly one host of the site and
   * another at least three: seeded with every host and one request slot each, the first runs
   * out of work about two seconds before the second. (With ids drawn blind, one node could
   * own every host the crawl reached and the others none: the test then found no idle node
   * with pages and failed.)
   */
  function unevenIds(): string[] {
    const dirs = site.hosts.map((h) => h.hostDir);
    for (let i = 0; i < 1000; i++) {
      const ids = ['a', 'b', 'c'].map((x) => `${x}${i}`);
      const nodes = ids.map(candidate);
      const counts = ids.map((id) => dirs.filter((d) => ownerOf(d, nodes) === id).length);
      if (counts.includes(1) && Math.max(...counts) >= 3) return ids;
    }
    throw new Error('no three ids with an uneven share of the hosts');
  }

  async function assertComplete(data: string): Promise<void> {
    const files = new Set(await listFiles(data));
    for (const f of expected) assert.ok(files.has(f), `missing ${f}`);
    assert.equal([...files].filter((f) => f.startsWith('links/')).length, expected.length);
    assert.deepEqual(
      [...files].filter((f) => f.startsWith('handoff/')),
      [],
      'every hand-off was read and removed',
    );
  }

  test('nodes that end done spare the others the full reseed; the last one removes the done records', async () => {
    site.reset();
    const data = await tempDir();
    // A node that starts late (a loaded machine) takes hosts whose pages the others already
    // fetched, and reads their records at the take (docs/protocol.md, "Host summaries"): that
    // is not the reseed this test counts. So no page is answered before every node is up.
    holdFor = data.path;
    try {
      const results = await Promise.all(IDS.map((id) => spawnCli(args(data.path, id)).done));
      for (const r of results) assert.equal(r.code, 0, r.stderr);
      await assertComplete(data.path);
      // Without the done state every node but the first to end rereads every links record
      // (about expected.length each) when a peer leaves. With it, a node reads records only
      // in its first (full) reseed, before much is written.
      const read = results.map(recordsRead);
      assert.ok(
        read.every((n) => n < expected.length / 2),
        `records read per node: ${read.join(', ')} (${expected.length} records in all)`,
      );
      assert.deepEqual(await records(data.path), [], 'no node record is left');
    } finally {
      holdFor = undefined;
      await data.cleanup();
    }
  });

  test('a node killed while its record says idle still makes the others reseed fully, and nothing is lost', async () => {
    site.reset();
    const data = await tempDir();
    // --no-lend: a node that goes idle while another crawls is lent hosts at the lender's next
    // heartbeat (docs/protocol.md, "Lending hosts"), and the window this test needs, a node
    // idle after it fetched pages while another still crawls, becomes too short to catch.
    const nodes = new Map(unevenIds().map((id) => [id, spawnCli([...args(data.path, id), '--concurrency', '1', '--no-lend'])]));
    try {
      // The victim: the first node whose record says idle after it fetched pages, while
      // another node still crawls. Its last record says idle: only `done` allows the shortcut.
      const end = Date.now() + 90_000;
      let victim: { id: string; pages: number } | undefined;
      const seen: string[] = [];
      while (victim === undefined) {
        const recs = await records(data.path);
        const line = recs
          .map((r) => `${r.id}:${r.state}:${r.pages}`)
          .sort()
          .join(' ');
        if (seen.at(-1) !== line) seen.push(line);
        const idle = recs.find((r) => r.state === 'idle' && r.pages > 0);
        if (idle !== undefined && recs.some((r) => r.state === 'crawling')) victim = idle;
        else {
          const all = [...nodes.values()];
          assert.ok(
            Date.now() < end && all.every((n) => n.exitCode === null),
            `no node was idle while another crawled:\n${seen.join('\n')}`,
          );
          await new Promise((r) => setTimeout(r, 5));
        }
      }
      nodes.get(victim.id)!.kill('SIGKILL');
      for (const [id, node] of nodes) {
        const r = await node.done;
        if (id === victim.id) {
          assert.equal(r.signal, 'SIGKILL');
          continue;
        }
        assert.equal(r.code, 0, r.stderr);
        // The full reseed that follows a lost node reads at least every record the victim wrote.
        assert.ok(recordsRead(r) >= victim.pages, `${id} read ${recordsRead(r)} records; the victim had written ${victim.pages}`);
      }
      await assertComplete(data.path);
      const duplicates = [...site.counts].reduce((a, [, n]) => a + n - 1, 0);
      assert.ok(duplicates <= 4, `${duplicates} duplicate fetches`);
    } finally {
      // A failed assertion must not leave nodes writing while the directory is removed (the
      // removal's ENOTEMPTY would hide the failure).
      for (const node of nodes.values()) if (node.exitCode === null && node.signalCode === null) node.kill('SIGKILL');
      await Promise.all([...nodes.values()].map((n) => n.done));
      await data.cleanup();
    }
  });
});
