import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { LinksRecord } from '../../src/store/records.js';
import { FAST, runCli, tempDir, type CliResult } from '../support/cli.js';
import { filesOf, readJson } from '../support/data-files.js';
import { page, pageRoute, requestedPaths, sendHtml, startRoutedSite, type HostRoutes } from '../support/routed-site.js';

/** `/cal/YYYY/MM` of the month `delta` months from `yyyy/mm`. */
function month(yyyy: number, mm: number, delta: number): string {
  const d = new Date(Date.UTC(yyyy, mm - 1 + delta, 1));
  return `/cal/${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

const LONG_OK = `/q?x=${'y'.repeat(8000)}`;
const LONG_CUT = `/q?x=${'z'.repeat(9000)}`;

/** Host 0: one trap of each kind behind the home page. */
const TRAPS: HostRoutes = {
  '/': pageRoute([
    '/deep/x.html',
    '/cal/2024/01',
    '/rep/a/',
    '/sess.html?sid=abc&page=2',
    '/sess.html?page=2&PHPSESSID=xyz',
    '/sess.html;jsessionid=123?page=2',
    '/long.html',
  ]),
  // A chain of pages, each one level deeper: /deep/x.html -> /deep/xx.html -> ...
  '/deep/*': (_req, res, ctx) => {
    const xs = /^\/deep\/(x+)\.html$/.exec(ctx.path)![1]!;
    sendHtml(res, page(ctx.path, [`/deep/${xs}x.html`]));
  },
  // An endless calendar: every month links the next and the previous one.
  '/cal/*': (_req, res, ctx) => {
    const [, y, m] = /^\/cal\/(\d+)\/(\d+)$/.exec(ctx.path)!;
    sendHtml(res, page(ctx.path, [month(Number(y), Number(m), 1), month(Number(y), Number(m), -1)]));
  },
  // Relative links that keep nesting: /rep/a/ -> /rep/a/a/ -> /rep/a/a/a/ ...
  '/rep/*': pageRoute(['a/']),
  '/sess.html?page=2': pageRoute(),
  '/long.html': pageRoute([LONG_CUT, LONG_OK]),
  '/q*': pageRoute(),
};

describe('crawler traps', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let run: CliResult;

  before(async () => {
    site = await startRoutedSite([TRAPS]);
    data = await tempDir();
    run = await runCli(['crawl', site.url(0, '/'), '--data', data.path, ...FAST, '--max-depth', '8', '--max-pages-per-pattern', '5'], {
      timeoutMs: 20_000,
    });
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('the crawl ends by itself', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /done \(complete\)/);
    for (const [url, n] of site.counts) assert.equal(n, 1, `${url.slice(0, 80)} requested ${n} times`);
  });

  test('--max-depth: the chain is followed to depth 8 and no further', async () => {
    const deep = requestedPaths(site, 0).filter((p) => p.startsWith('/deep/'));
    assert.deepEqual(
      deep,
      Array.from({ length: 8 }, (_, i) => `/deep/${'x'.repeat(i + 1)}.html`),
    );
    const last = await readJson<LinksRecord>(data.path, filesOf(site.url(0, `/deep/${'x'.repeat(8)}.html`)).links);
    assert.equal(last.depth, 8);
  });

  test('an endless calendar stays within --max-pages-per-pattern', () => {
    // It runs both ways (next and previous month): which five are fetched depends on the order.
    const cal = requestedPaths(site, 0).filter((p) => p.startsWith('/cal/'));
    assert.equal(cal.length, 5, cal.join(' '));
    assert.ok(cal.includes('/cal/2024/01'));
  });

  test('a path with one segment repeated 3 times is not fetched', () => {
    const rep = requestedPaths(site, 0).filter((p) => p.startsWith('/rep/'));
    assert.deepEqual(rep, ['/rep/a/', '/rep/a/a/']);
  });

  test('session-id parameters are stripped: three spellings, one request without them', async () => {
    const sess = requestedPaths(site, 0).filter((p) => p.startsWith('/sess'));
    assert.deepEqual(sess, ['/sess.html?page=2']);
    const home = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/')).links);
    assert.equal(home.links.filter((l) => l.includes('/sess')).length, 1);
  });

  test('a URL over 8 KiB is dropped; one under it is followed', () => {
    const q = requestedPaths(site, 0).filter((p) => p.startsWith('/q'));
    assert.deepEqual(q, [LONG_OK]);
    for (const url of site.counts.keys()) assert.ok(url.length <= 8192, `requested a URL of ${url.length} characters`);
  });

  test('nothing outside the traps is requested', () => {
    const known = /^\/(robots\.txt|deep\/|cal\/|rep\/|sess\.html|long\.html|q\?|$)/;
    for (const p of requestedPaths(site, 0)) assert.match(p.slice(0, 100), known);
  });

  test('the end summary says what was cut', () => {
    const cut = /^cut: (.*)$/m.exec(run.stderr)?.[1];
    assert.ok(cut, run.stderr);
    assert.match(cut, /\bdepth [1-9]/);
    assert.match(cut, /\bpatternBudget [1-9]/);
    assert.match(cut, /\brepeatedSegment [1-9]/);
    assert.match(cut, /\btooLong 1\b/);
  });
});

describe('--max-pages-per-host', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    const links = Array.from({ length: 20 }, (_, i) => `/p${String.fromCharCode(97 + i)}.html`);
    site = await startRoutedSite([{ '/': pageRoute(links), '/p*': pageRoute() }]);
    data = await tempDir();
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('a host gets at most that many page requests in a run', { timeout: 20_000 }, async () => {
    const r = await runCli(['crawl', site.url(0, '/'), '--data', data.path, ...FAST, '--max-pages-per-host', '5'], {
      timeoutMs: 15_000,
    });
    assert.equal(r.code, 0, r.stderr);
    const pages = requestedPaths(site, 0).filter((p) => p !== '/robots.txt');
    assert.equal(pages.length, 5, pages.join(' '));
    assert.match(r.stderr, /^cut: .*hostBudget 16\b/m);
  });
});
