import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, runCli, tempDir, type CliResult } from '../support/cli.js';
import { filesOf } from '../support/data-files.js';
import { CLOCK_TOLERANCE_MS, loggedStarts } from '../support/request-starts.js';
import {
  gaps,
  maxInFlightOverall,
  page,
  pageRoute,
  requestedPaths,
  sendHtml,
  sleep,
  startRoutedSite,
  startTimes,
  type HostRoutes,
  type Route,
} from '../support/routed-site.js';

/** A page that answers after `ms`. */
function slowPage(ms: number, links: readonly string[] = []): Route {
  return async (_req, res, ctx) => {
    await sleep(ms);
    if (!res.destroyed) sendHtml(res, page(ctx.path, links));
  };
}

/** Eight pages that each take 400 ms. */
function busyHost(): HostRoutes {
  const pages = Array.from({ length: 7 }, (_, i) => `/p/${i}.html`);
  return { '/': slowPage(400, pages), '/p/*': slowPage(400) };
}

describe('--per-host and --delay', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let run: CliResult;

  before(async () => {
    site = await startRoutedSite([busyHost(), busyHost()]);
    data = await tempDir();
    run = await runCli(
      // --warc: the gap test measures the request starts the crawler logged.
      ['crawl', site.url(0, '/'), site.url(1, '/'), '--data', data.path, ...FAST, '--per-host', '2', '--delay', '150', '--warc'],
      { timeoutMs: 20_000 },
    );
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('the crawl completes and fetches every page once', () => {
    assert.equal(run.code, 0, run.stderr);
    for (const i of [0, 1]) assert.equal(requestedPaths(site, i).length, 9, `host ${i}: robots.txt and 8 pages`);
    for (const [url, n] of site.counts) assert.equal(n, 1, `${url} requested ${n} times`);
  });

  test('never more than --per-host requests in flight on a host, and the limit is reached', () => {
    for (const i of [0, 1]) assert.equal(site.maxInFlight(i), 2, `host ${i}`);
  });

  test('request starts on one host are at least --delay apart', async () => {
    for (const i of [0, 1]) {
      const times = await loggedStarts(data.path, site.hosts[i]!.origin);
      assert.equal(times.length, 9, `host ${i}: robots.txt and 8 pages`);
      for (const g of gaps(times)) assert.ok(g >= 150 - CLOCK_TOLERANCE_MS, `host ${i}: gap ${g.toFixed(0)} ms < --delay 150`);
    }
  });
});

describe('--concurrency', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let run: CliResult;

  before(async () => {
    // Eight hosts whose every answer, robots.txt included, takes 300 ms.
    const host: HostRoutes = { '/robots.txt': slowPage(300), '/': slowPage(300, ['/a.html']), '/a.html': slowPage(300) };
    site = await startRoutedSite(Array.from({ length: 8 }, () => host));
    data = await tempDir();
    run = await runCli(['crawl', ...site.hosts.map((h) => `${h.origin}/`), '--data', data.path, ...FAST, '--concurrency', '2'], {
      timeoutMs: 20_000,
    });
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('the crawl completes', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(site.total, 8 * 3);
  });

  // robots.txt requests count among the requests in flight too (RequestRunner.fetchRobots).
  test('never more than --concurrency requests in flight, robots.txt included', () => {
    assert.ok(maxInFlightOverall(site) <= 2, `${maxInFlightOverall(site)} requests in flight at once`);
  });

  test('never more than --concurrency page requests in flight', () => {
    let now = 0;
    let max = 0;
    const events = [...site.times]
      .filter(([url]) => !url.endsWith('/robots.txt'))
      .flatMap(([, ts]) => ts.flatMap((t) => [[t, 1] as const, [t + 300, -1] as const]))
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    for (const [, d] of events) max = Math.max(max, (now += d));
    assert.ok(max <= 2, `${max} page requests overlapped`);
  });
});

describe('Retry-After and slow hosts', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let run: CliResult;
  /** Wall-clock arrival of each request of host 1, and the date its 503 asked to wait for. */
  const host1Arrivals: number[] = [];
  let retryDate = 0;
  let sent503At = 0;
  let sent429At = 0;
  let robots429At = 0;

  before(async () => {
    const pages = ['/a.html', '/b.html', '/c.html'];
    site = await startRoutedSite([
      // 0: the first request of /a.html is told to come back in 2 s.
      {
        '/': pageRoute(pages),
        '/a.html': (req, res, ctx) => {
          if (ctx.n > 1) return pageRoute()(req, res, ctx);
          sent429At = performance.now();
          res.writeHead(429, { 'retry-after': '2', 'content-length': 0 });
          res.end();
        },
        '/b.html': pageRoute(),
        '/c.html': pageRoute(),
      },
      // 1: the first request of /x.html gets a 503 with an HTTP-date two seconds ahead.
      Object.fromEntries(
        Object.entries<Route>({
          '/': pageRoute(['/x.html', '/y.html', '/z.html']),
          '/x.html': (req, res, ctx) => {
            if (ctx.n > 1) return pageRoute()(req, res, ctx);
            sent503At = Date.now();
            retryDate = Math.ceil(sent503At / 1000) * 1000 + 2000;
            res.writeHead(503, { 'retry-after': new Date(retryDate).toUTCString(), 'content-length': 0 });
            res.end();
          },
          '/y.html': pageRoute(),
          '/z.html': pageRoute(),
          '/robots.txt': (_req, res) => {
            res.writeHead(404, { 'content-length': 0 });
            res.end();
          },
        }).map(([path, route]) => [
          path,
          ((req, res, ctx) => {
            host1Arrivals.push(Date.now());
            return route(req, res, ctx);
          }) as Route,
        ]),
      ),
      // 2: a host whose every page takes 3 s.
      { '/': slowPage(3_000) },
      // 3: a quick host with a few pages.
      { '/': pageRoute(['/q/1.html', '/q/2.html', '/q/3.html', '/q/4.html', '/q/5.html']), '/q/*': pageRoute() },
      // 4: robots.txt answers 429 with Retry-After: 2 once, then 404.
      {
        '/robots.txt': (_req, res, ctx) => {
          if (ctx.n === 1) robots429At = performance.now();
          res.writeHead(ctx.n === 1 ? 429 : 404, ctx.n === 1 ? { 'retry-after': '2', 'content-length': 0 } : { 'content-length': 0 });
          res.end();
        },
        '/': pageRoute(),
      },
    ]);
    data = await tempDir();
    run = await runCli(['crawl', ...site.hosts.map((h) => `${h.origin}/`), '--data', data.path, ...FAST, '--per-host', '1'], {
      timeoutMs: 20_000,
    });
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('the crawl completes; the pages that got 429 and 503 are fetched on their second request', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(site.count(site.url(0, '/a.html')), 2);
    assert.equal(site.count(site.url(1, '/x.html')), 2);
    for (const [i, path] of [
      [0, '/a.html'],
      [1, '/x.html'],
    ] as const) {
      const f = filesOf(site.url(i, path));
      assert.ok(existsSync(join(data.path, f.links)), `${path} stored`);
      assert.ok(!existsSync(join(data.path, f.errs)), `${path} errs record left`);
    }
  });

  test('429 with Retry-After: 2: no request to that host for 2 s', () => {
    assert.ok(sent429At > 0);
    const later = startTimes(site, 0).filter((t) => t > sent429At);
    assert.equal(later.length, 3, '/a.html again, /b.html, /c.html');
    for (const t of later) assert.ok(t - sent429At >= 2_000, `a request ${(t - sent429At).toFixed(0)} ms after the 429`);
  });

  test('503 with an HTTP-date Retry-After: no request to that host before that date', () => {
    assert.ok(retryDate > 0);
    // With --per-host 1 the next request starts after the 503 was received: strictly later.
    const later = host1Arrivals.filter((t) => t > sent503At);
    assert.equal(later.length, 3, '/x.html again, /y.html, /z.html');
    for (const t of later) assert.ok(t >= retryDate, `a request ${retryDate - t} ms before the Retry-After date`);
  });

  // An unavailable robots.txt with Retry-After makes the host wait at least that long.
  test('a 429 on robots.txt with Retry-After: 2: no request to that host for 2 s', () => {
    assert.ok(robots429At > 0);
    const later = startTimes(site, 4).filter((t) => t > robots429At);
    assert.equal(later.length, 2, 'robots.txt again, then /');
    for (const t of later) assert.ok(t - robots429At >= 2_000, `a request ${(t - robots429At).toFixed(0)} ms after the 429`);
  });

  test('a slow host does not hold up the others', () => {
    const slowStart = startTimes(site, 2, (p) => p === '/')[0]!;
    const quick = startTimes(site, 3);
    assert.equal(quick.length, 7, 'robots.txt and six pages');
    // Not a time limit (a loaded machine is slow): the slow page answers 3 s after it arrived,
    // and the quick host's requests go on meanwhile. Had it held them up, none would arrive then.
    const during = quick.filter((t) => t > slowStart && t < slowStart + 3_000);
    assert.ok(during.length > 0, 'the quick host waited for the slow one');
  });
});
