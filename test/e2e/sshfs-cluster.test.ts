import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pagePath, startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, spawnCli } from '../support/cli.js';
import { filesOf, listFiles, tempFiles } from '../support/data-files.js';
import { startSshfsPair, type SshfsPair } from '../support/sshfs-pair.js';

const HOSTS = 6;
const PAGES = 40;
const PER_HOST = 2;

/**
 * Two nodes, each on its own sshfs mount of one export (two "machines" with separate FUSE
 * caches, docs/architecture.md, "Tests"), crawl one site together.
 */
describe('two nodes on two sshfs mounts of one export', { timeout: 180_000 }, () => {
  let site: LoopbackSite;
  let pair: SshfsPair | { skip: string };

  before(async () => {
    site = await startGeneratedSite({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 4, crossLinks: 2, latencyMs: 20 });
    pair = await startSshfsPair(2);
  });
  after(async () => {
    await site.close();
    if (!('skip' in pair)) await pair.stop();
  });

  test('cover the site, fetch nothing twice, keep the per-host limit, leave nothing behind', async (t) => {
    if ('skip' in pair) return t.skip(`sshfs unavailable: ${pair.skip}`);
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const started = Date.now();
    const nodes = pair.mounts.map((mount, i) =>
      spawnCli(['crawl', ...seeds, '--data', join(mount, 'data'), '--per-host', String(PER_HOST), '--node-id', `m${i + 1}`, ...FAST]),
    );
    const results = await Promise.all(nodes.map((n) => n.done));
    const seconds = (Date.now() - started) / 1000;
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const pages = results.map((r) => Number(/done \(\w+\): (\d+) pages/.exec(r.stderr)?.[1]));
    t.diagnostic(`sshfs pair: ${HOSTS * PAGES} pages in ${seconds.toFixed(1)} s, split ${pages.join(' + ')}`);
    assert.equal(pages[0]! + pages[1]!, HOSTS * PAGES);

    const dups = [...site.counts].filter(([, n]) => n > 1).map(([u, n]) => `${u} x${n}`);
    assert.deepEqual(dups, [], results.map((r) => r.stderr).join('\n---\n'));
    for (let h = 0; h < HOSTS; h++) assert.ok(site.maxInFlight(h) <= PER_HOST, `host ${h}: ${site.maxInFlight(h)} in flight`);

    // Read the result through the export itself (the server's view).
    const data = join(pair.export, 'data');
    const files = new Set(await listFiles(data));
    for (let h = 0; h < HOSTS; h++) {
      for (let i = 0; i < PAGES; i++) {
        const f = filesOf(site.url(h, pagePath(i)));
        assert.ok(files.has(f.links), `missing ${site.url(h, pagePath(i))}`);
        JSON.parse(await readFile(join(data, f.links), 'utf8'));
      }
    }
    assert.deepEqual(await tempFiles(data), []);
    assert.deepEqual([...files].filter((f) => f.startsWith('hosts/') || f.startsWith('nodes/')), []);
  });
});
