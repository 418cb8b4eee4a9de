import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/config/clock.js';
import { CrawlNode } from '../../src/crawl/crawl-node.js';
import { ExitCode } from '../../src/errors.js';
import { silentLogger } from '../../src/progress/logger.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { frontierConfig } from '../support/frontier-rig.js';
import { pageRoute, startRoutedSite } from '../support/routed-site.js';

let root: string;
let site: LoopbackSite;
let n = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mountcrawl-node-'));
  site = await startRoutedSite([{ '/': pageRoute(['/a', '/b']), '/a': pageRoute(['/c']), '/b': pageRoute(), '/c': pageRoute() }]);
});
after(async () => {
  await site.close();
  await rm(root, { recursive: true, force: true });
});

function node(over: Parameters<typeof frontierConfig>[0] = {}): CrawlNode {
  const config = frontierConfig({ dataDir: join(root, `d${n++}`), seedUrls: [site.url(0, '/')], heartbeatMs: 50, robots: false, ...over });
  return new CrawlNode(config, { clock: systemClock, logger: silentLogger });
}

describe('CrawlNode', { timeout: 60_000 }, () => {
  test('alone, it crawls the site and ends when the termination rule says so', async () => {
    const crawl = node();
    const r = await crawl.run();
    assert.deepEqual(r, { reason: 'complete', exitCode: ExitCode.OK });
    assert.equal(crawl.stats.pages, 4);
  });

  test('--max-pages ends the run once that many pages were fetched', async () => {
    const crawl = node({ maxPages: 1 });
    const r = await crawl.run();
    assert.equal(r.reason, 'max-pages');
    assert.equal(crawl.stats.pages, 1);
  });

  test('stop() ends the run with the exit code asked for', async () => {
    const crawl = node({ watch: true });
    const run = crawl.run();
    // --watch never completes: wait until the site is crawled, then stop.
    while (crawl.stats.pages < 4) await new Promise((resolve) => setTimeout(resolve, 10));
    crawl.stop(ExitCode.INTERRUPTED);
    assert.deepEqual(await run, { reason: 'stopped', exitCode: ExitCode.INTERRUPTED });
  });
});
