import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pagePath, startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, runCli, spawnCli, tempDir } from '../support/cli.js';
import { until } from '../support/until.js';

describe('--watch and `mountcrawl seed`', { timeout: 60_000 }, () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    site = await startGeneratedSite({ hosts: 2, pagesPerHost: 20, linksPerPage: 3 });
    data = await tempDir();
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('a watching node crawls seeds added while it runs, and keeps running until stopped', async () => {
    const host0Done = (): boolean => Array.from({ length: 20 }, (_, i) => site.count(site.url(0, pagePath(i)))).every((n) => n === 1);
    const host1Pages = (): number => Array.from({ length: 20 }, (_, i) => site.count(site.url(1, pagePath(i)))).filter((n) => n > 0).length;
    const node = spawnCli(['crawl', site.url(0, '/'), '--data', data.path, '--watch', ...FAST]);
    await until(host0Done);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(node.exitCode, null, 'a watching node does not exit when the crawl is done');
    assert.equal(host1Pages(), 0);

    const seed = await runCli(['seed', site.url(1, '/'), '--data', data.path]);
    assert.equal(seed.code, 0, seed.stderr);
    assert.match(seed.stdout, /^[0-9a-f]{56}\thttp:\/\/127\.0\.0\.3:\d+\/\n$/);
    await until(() => host1Pages() === 20);

    node.kill('SIGTERM');
    const r = await node.done;
    assert.equal(r.code, 143, r.stderr);
    for (const [url, n] of site.counts) assert.equal(n, 1, `${url} fetched ${n} times`);
  });
});
