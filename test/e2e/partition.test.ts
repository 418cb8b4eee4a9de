import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generatedSite, pagePath } from '../../src/site/generated-site.js';
import { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, spawnCli, tempDir } from '../support/cli.js';
import { filesOf, listFiles, tempFiles } from '../support/data-files.js';

const PAGES = 150;

describe('--partition url: one big site shared by URL', { timeout: 60_000 }, () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    data = await tempDir();
    // Both nodes must crawl whichever starts first and however far apart (a loaded machine).
    // A node asks for robots.txt before any page, and robots.txt is answered only once both
    // node records exist and then half a second more (five of the test's heartbeats, each of
    // which reads nodes/), at most 20 s: so no page is asked for before each node counts the
    // other. A join after pages were asked for fetches again what was in flight for the URLs
    // that moved (docs/protocol.md, "Nodes and liveness"), which this test does not measure.
    const joined = (): boolean => ['u1', 'u2'].every((id) => existsSync(join(data.path, 'nodes', `${id}.json`)));
    const deadline = performance.now() + 20_000;
    let joinedAt: number | undefined;
    const settled = (): boolean => {
      if (joinedAt === undefined && joined()) joinedAt = performance.now();
      return joinedAt !== undefined && performance.now() - joinedAt >= 500;
    };
    let started: LoopbackSite | undefined;
    const handle = generatedSite({ hosts: 1, pagesPerHost: PAGES, linksPerPage: 6 }, () => started!.hosts);
    started = await LoopbackSite.start({
      hosts: 1,
      latencyMs: 10,
      handle: async (req, res, host, path) => {
        while (path === '/robots.txt' && !settled() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        return handle(req, res, host, path);
      },
    });
    site = started;
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('two nodes share one host by URL: both crawl, nothing twice, politeness per node', async () => {
    const args = (id: string): string[] => [
      'crawl',
      site.url(0, '/'),
      '--data',
      data.path,
      '--partition',
      'url',
      '--per-host',
      '2',
      '--node-id',
      id,
      ...FAST,
    ];
    const results = await Promise.all([spawnCli(args('u1')), spawnCli(args('u2'))].map((n) => n.done));
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const pages = results.map((r) => Number(/done \(\w+\): (\d+) pages?\b/.exec(r.stderr)?.[1]));
    assert.equal(pages[0]! + pages[1]!, PAGES);
    assert.ok(pages[0]! > 0 && pages[1]! > 0, `split ${pages.join(' + ')}`);
    const dups = [...site.counts].filter(([url, n]) => n > 1 && !url.endsWith('/robots.txt'));
    assert.deepEqual(dups, []);
    // Politeness is per node here: each node keeps --per-host, so the host sees at most 2 x 2.
    assert.ok(site.maxInFlight(0) <= 4, `${site.maxInFlight(0)} in flight`);
    const files = new Set(await listFiles(data.path));
    for (let i = 0; i < PAGES; i++) assert.ok(files.has(filesOf(site.url(0, pagePath(i))).links));
    assert.deepEqual(await tempFiles(data.path), []);
  });
});
