import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../../src/config/clock.js';
import { CrawlNode } from '../../../src/crawl/crawl-node.js';
import { ExitCode } from '../../../src/errors.js';
import { silentLogger } from '../../../src/progress/logger.js';
import type { LoopbackSite } from '../../../src/site/site-server.js';
import { FakeClock } from '../../support/fake-clock.js';
import { type Answer, fakeFetcher } from '../../support/fake-fetcher.js';
import { MemoryFs } from '../../support/memory-fs.js';
import type { FetchOptions, Fetcher } from '../../../src/fetch/fetcher.js';
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

/** A fetcher that notes each request's start on the node's clock. */
function recordStarts(fetcher: Fetcher, clock: FakeClock): { starts: number[]; recording: Fetcher } {
  const starts: number[] = [];
  const recording = {
    fetch: (url: string, options?: FetchOptions) => {
      starts.push(clock.monotonic());
      return fetcher.fetch(url, options);
    },
    close: () => fetcher.close(),
  } as unknown as Fetcher;
  return { starts, recording };
}

/** Runs a node on a fake clock: no real I/O, so a turn of the event loop settles every promise; then the clock moves on 50 ms. */
async function runOnFakeClock(crawl: CrawlNode, clock: FakeClock): Promise<Awaited<ReturnType<CrawlNode['run']>> | undefined> {
  let result: Awaited<ReturnType<CrawlNode['run']>> | undefined;
  const run = crawl.run().then((r) => (result = r));
  for (let step = 0; result === undefined && step < 40_000; step++) {
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(50);
  }
  await run;
  return result;
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
    // which moves only when the test moves it. The mount is in memory and the site a table,
    // so no real I/O or real time is involved and the gaps are exact.
    const clock = new FakeClock();
    const config = frontierConfig({
      dataDir: '/nonexistent/mountcrawl-fake-clock',
      seedUrls: ['http://a.test/'],
      robots: false,
      delayMs: 5_000,
      perHost: 1,
      heartbeatMs: 1_000,
      deadAfterMs: 60_000,
    });
    const page = (links: string[]): Answer => [200, {}, links.map((l) => `<a href="${l}">x</a>`).join('')];
    const { fetcher } = fakeFetcher({
      'http://a.test/': page(['/1', '/2', '/3']),
      'http://a.test/1': page([]),
      'http://a.test/2': page([]),
      'http://a.test/3': page([]),
    });
    // Each request's start, on the node's clock.
    const { starts, recording } = recordStarts(fetcher, clock);
    const crawl = new CrawlNode(config, { clock, logger: silentLogger, fs: new MemoryFs(() => clock.now()), fetcher: recording });
    const started = clock.monotonic();
    const result = await runOnFakeClock(crawl, clock);
    assert.deepEqual(result, { reason: 'complete', exitCode: ExitCode.OK });
    assert.equal(crawl.stats.pages, 4);
    assert.equal(starts.length, 4, 'one request a page');
    for (let i = 1; i < starts.length; i++) {
      const gap = starts[i]! - starts[i - 1]!;
      assert.ok(gap >= 5_000, `requests ${i} and ${i + 1} started ${gap} ms apart on the node's clock: --delay 5s not kept`);
      // At the delay on the node's clock, to a step of the test: a wait on real time would let
      // the test move the node's clock by far more.
      assert.ok(gap <= 5_100, `requests ${i} and ${i + 1} started ${gap} ms apart on the node's clock: a wait ran on real time`);
    }
    assert.ok(clock.monotonic() - started >= 15_000, "the crawl took at least three delays of the node's time");
  });

  test('a start that stalls past half of --dead-after before its first record: no request until a heartbeat and a half after that record (peers that saw its first files may count it dead)', async () => {
    const clock = new FakeClock();
    const heartbeatMs = 1_000;
    const config = frontierConfig({
      dataDir: '/nonexistent/mountcrawl-slow-start',
      seedUrls: ['http://a.test/'],
      robots: false,
      heartbeatMs,
      deadAfterMs: 10_000,
    });
    const { fetcher } = fakeFetcher({ 'http://a.test/': [200, {}, 'no links'] });
    const { starts, recording } = recordStarts(fetcher, clock);
    // The mount stalls 6 s (of the node's clock) on the node's first record; when it went out is noted.
    const memory = new MemoryFs(() => clock.now());
    let stalled = false;
    let firstRecord: number | undefined;
    const fs = new Proxy(memory, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name === 'writeNew')
          return async (path: string, data: string | Uint8Array) => {
            if (path.includes('/nodes/') && !stalled) {
              stalled = true;
              const until = clock.monotonic() + 6_000;
              while (clock.monotonic() < until) await new Promise((resolve) => setImmediate(resolve));
            }
            return target.writeNew(path, data);
          };
        if (name === 'rename')
          return async (from: string, to: string) => {
            await target.rename(from, to);
            if (to.includes('/nodes/')) firstRecord ??= clock.monotonic();
          };
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const crawl = new CrawlNode(config, { clock, logger: silentLogger, fs, fetcher: recording });
    const result = await runOnFakeClock(crawl, clock);
    assert.deepEqual(result, { reason: 'complete', exitCode: ExitCode.OK });
    assert.equal(starts.length, 1);
    assert.notEqual(firstRecord, undefined);
    assert.ok(
      starts[0]! - firstRecord! >= 1.5 * heartbeatMs,
      `the first request ${starts[0]! - firstRecord!} ms after the first record: fenced for less than a heartbeat and a half`,
    );
  });
});
