import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, spawnCli, tempDir } from '../support/cli.js';
import { listFiles, tempFiles } from '../support/data-files.js';

const HOSTS = 6;
const PAGES = 40;
const CONCURRENCY = 4;

/** Names of the hand-off files `writer` has published so far, in every inbox. */
async function handoffsBy(data: string, writer: string): Promise<number> {
  let n = 0;
  const inboxes = await readdir(join(data, 'handoff')).catch(() => [] as string[]);
  for (const inbox of inboxes) {
    const names = await readdir(join(data, 'handoff', inbox)).catch(() => [] as string[]);
    n += names.filter((f) => f.startsWith(`${writer}+`)).length;
  }
  return n;
}

/**
 * Three nodes on one directory exchange hand-offs (docs/protocol.md, "Hand-offs"); one is
 * killed with SIGKILL the moment its first hand-off file is published, while it still has
 * pages in flight, links in its unsent batches and links records written that no other node
 * has read. The survivors take its hosts over and reseed fully: every page is fetched, and
 * nothing twice beyond what the killed node had in flight.
 */
describe('hand-offs with a node killed next to a hand-off write', { timeout: 180_000 }, () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    site = await startGeneratedSite({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 4, crossLinks: 2, latencyMs: 50 });
    data = await tempDir();
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('coverage complete, duplicates at most what was in flight, no hand-off or temp file left', async () => {
    // One seed and --scope any: every other host is found only through links between hosts,
    // which is what hand-offs carry. A single node's crawl (no hand-offs) says what complete is.
    const seeds = [`${site.hosts[0]!.origin}/`];
    const reference = await tempDir();
    const alone = await spawnCli(['crawl', ...seeds, '--data', reference.path, '--scope', 'any', '--no-handoff', ...FAST]).done;
    assert.equal(alone.code, 0, alone.stderr);
    const expected = (await listFiles(reference.path)).filter((f) => f.startsWith('links/'));
    await reference.cleanup();
    assert.ok(expected.length > PAGES, `the reference crawl reached other hosts (${expected.length} records)`);
    site.reset();
    const args = (id: string): string[] => [
      'crawl',
      ...seeds,
      '--data',
      data.path,
      '--node-id',
      id,
      '--scope',
      'any',
      '--per-host',
      '1',
      '--concurrency',
      String(CONCURRENCY),
      '--json',
      ...FAST,
    ];
    // The nodes are alike: which one owns the seed's host, and so writes the first hand-off,
    // depends on when each started. The first node to publish a hand-off is the one killed.
    const nodes = new Map(['n1', 'n2', 'n3'].map((id) => [id, spawnCli(args(id))]));
    // Watch for the first published hand-off as closely as a poll can, then kill its writer.
    const end = Date.now() + 60_000;
    let victim: string | undefined;
    while (victim === undefined) {
      for (const id of nodes.keys()) if (victim === undefined && (await handoffsBy(data.path, id)) > 0) victim = id;
      if (victim !== undefined) break;
      const all = [...nodes.values()];
      assert.ok(
        Date.now() < end && all.every((n) => n.exitCode === null),
        `no node wrote a hand-off:\n${all.map((n) => n.stderrSoFar()).join('\n---\n')}`,
      );
      await new Promise((r) => setTimeout(r, 2));
    }
    nodes.get(victim)!.kill('SIGKILL');
    for (const [id, node] of nodes) {
      const r = await node.done;
      if (id === victim) assert.equal(r.signal, 'SIGKILL');
      else assert.equal(r.code, 0, r.stderr);
    }

    const files = new Set(await listFiles(data.path));
    for (const f of expected) {
      assert.ok(files.has(f), `missing ${f}`);
      JSON.parse(await readFile(join(data.path, f), 'utf8'));
    }
    assert.equal([...files].filter((f) => f.startsWith('links/')).length, expected.length);
    const duplicates = [...site.counts].reduce((a, [, n]) => a + n - 1, 0);
    assert.ok(duplicates <= CONCURRENCY, `${duplicates} duplicate fetches: ${[...site.counts].filter(([, n]) => n > 1).map(([u]) => u)}`);
    for (let h = 0; h < HOSTS; h++) assert.ok(site.maxInFlight(h) <= 1, `host ${h}: ${site.maxInFlight(h)} in flight`);
    assert.deepEqual(
      [...files].filter((f) => f.startsWith('handoff/')),
      [],
      'every hand-off was read and removed',
    );
    // A lease's temporary file in hosts/ is swept later, by age (docs/protocol.md, invariant 4).
    assert.deepEqual(
      (await tempFiles(data.path)).filter((f) => !f.startsWith('hosts/')),
      [],
    );
  });
});
