import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, type Dispatcher } from 'undici';
import { systemClock } from '../../../src/config/clock.js';
import { CrawlNode } from '../../../src/crawl/crawl-node.js';
import { ExitCode } from '../../../src/errors.js';
import { silentLogger } from '../../../src/progress/logger.js';
import type { LoopbackSite } from '../../../src/site/site-server.js';
import { FakeClock } from '../../support/fake-clock.js';
import { frontierConfig } from '../../support/frontier-rig.js';
import { tempFiles } from '../../support/data-files.js';
import { hookFs } from '../../support/fs-hook.js';
import { pageRoute, startRoutedSite } from '../../support/routed-site.js';

type Cb = (...args: unknown[]) => void;

/**
 * Every rename and unlink fails with EIO (a mount whose link is cut) until the returned
 * function is called; except the data directory's own check (its `write-check` probe), so
 * that the node opens it and the cut comes right after.
 */
function cutMount(): () => void {
  const eio = (call: string) => Object.assign(new Error(`EIO: i/o error, ${call}`), { code: 'EIO' });
  const restoreRename = hookFs<(a: string, b: string, cb: Cb) => void>('rename', () => (_a, _b, cb) => cb(eio('rename')));
  const restoreUnlink = hookFs<(a: string, cb: Cb) => void>(
    'unlink',
    (original) => (a, cb) => (basename(a).startsWith('.write-check~') ? original(a, cb) : cb(eio('unlink'))),
  );
  return () => {
    restoreRename();
    restoreUnlink();
  };
}

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

  test('a mount that fails while the node starts (its seeds cannot be written) is waited out: it then crawls to the end and leaves no temporary file', async () => {
    const crawl = node({ mountRetryMs: 30_000 });
    const restore = cutMount();
    let restored = false;
    const timer = setTimeout(() => {
      restored = true;
      restore();
    }, 400);
    try {
      const r = await crawl.run();
      assert.ok(restored, 'the run did not end while the mount was failing');
      assert.deepEqual(r, { reason: 'complete', exitCode: ExitCode.OK });
      assert.equal(crawl.stats.pages, 4);
    } finally {
      clearTimeout(timer);
      restore();
    }
    const data = join(root, `d${n - 1}`);
    assert.deepEqual(await tempFiles(data), []);
    assert.equal((await readdir(join(data, 'seeds'))).length, 1);
  });

  test('a mount that stays failed while the node starts: the run ends with exit MOUNT after --mount-retry, not as a bug', async () => {
    const crawl = node({ mountRetryMs: 300 });
    const restore = cutMount();
    try {
      const r = await crawl.run();
      assert.equal(r.reason, 'mount-failed');
      assert.equal(r.exitCode, ExitCode.MOUNT);
      assert.match(r.message ?? '', /MOUNT_IO/);
      assert.equal(crawl.stats.pages, 0);
    } finally {
      restore();
    }
  });

  test("on a fake clock: politeness, heartbeats and the end rule run on the node's clock, which only the test moves", async () => {
    // Five seconds between two requests to the host: four pages take 15 s of the node's time,
    // which moves only when the test moves it.
    const clock = new FakeClock();
    const config = frontierConfig({
      dataDir: join(root, `d${n++}`),
      seedUrls: [site.url(0, '/')],
      robots: false,
      delayMs: 5_000,
      perHost: 1,
      heartbeatMs: 1_000,
      deadAfterMs: 60_000,
    });
    // Each request's start, on the node's clock.
    const starts: number[] = [];
    class Recording extends Agent {
      override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        starts.push(clock.monotonic());
        return super.dispatch(options, handler);
      }
    }
    const dispatcher = new Recording();
    const crawl = new CrawlNode(config, { clock, logger: silentLogger, dispatcher });
    const started = clock.monotonic();
    let result: Awaited<ReturnType<CrawlNode['run']>> | undefined;
    const run = crawl.run().then((r) => (result = r));
    for (let step = 0; result === undefined && step < 40_000; step++) {
      // Let the node's I/O (files, the loopback site) go on, then move its clock on by 50 ms.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 1));
      clock.advance(50);
    }
    await run;
    assert.deepEqual(result, { reason: 'complete', exitCode: ExitCode.OK });
    assert.equal(crawl.stats.pages, 4);
    await dispatcher.close();
    assert.equal(starts.length, 4, 'one request a page');
    for (let i = 1; i < starts.length; i++) {
      const gap = starts[i]! - starts[i - 1]!;
      assert.ok(gap >= 5_000, `requests ${i} and ${i + 1} started ${gap} ms apart on the node's clock: --delay 5s not kept`);
      // Soon after the delay on the node's clock (a few steps of I/O), not 5 s of the machine's
      // later: a wait on real time would let the test move the node's clock by minutes.
      assert.ok(gap < 9_000, `requests ${i} and ${i + 1} started ${gap} ms apart on the node's clock: a wait ran on real time`);
    }
    assert.ok(clock.monotonic() - started >= 15_000, "the crawl took at least three delays of the node's time");
  });
});
