import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { ErrsRecord, LinksRecord } from '../../src/store/records.js';
import { FAST, runCli, tempDir, type CliResult } from '../support/cli.js';
import { filesOf, readJson } from '../support/data-files.js';
import { CLOCK_TOLERANCE_MS, loggedStarts } from '../support/request-starts.js';
import {
  gaps,
  pageRoute,
  redirectRoute,
  requestedPaths,
  robotsRoute,
  startRoutedSite,
  startTimes,
  statusRoute,
  type HostRoutes,
} from '../support/routed-site.js';

/** Host 0's robots.txt: our own group (product token `mountcrawl`) wins over `*`. */
const RULES = `# rules for tests
User-agent: otherbot
Disallow: /

User-agent: mountcrawl
Disallow: /private/
Allow: /private/open.html
Disallow: /*.pdf$
Disallow: /search?
Disallow: /*/secret-*

User-agent: *
Disallow: /
`;

const RULES_HOST: HostRoutes = {
  '/robots.txt': robotsRoute(RULES),
  '/': pageRoute([
    '/private/secret.html',
    '/private/open.html',
    '/files/doc.pdf',
    '/files/doc.pdf?download=1',
    '/search?q=1',
    '/searchable.html',
    '/a/secret-x.html',
    '/go',
    '/public.html',
  ]),
  '/private/open.html': pageRoute(),
  '/private/secret.html': pageRoute(),
  '/private/hidden.html': pageRoute(),
  '/files/doc.pdf': pageRoute(),
  '/files/doc.pdf?download=1': pageRoute(),
  '/search?q=1': pageRoute(),
  '/searchable.html': pageRoute(),
  '/a/secret-x.html': pageRoute(),
  '/public.html': pageRoute(),
  // A redirect whose target robots.txt disallows: the hop must not be requested.
  '/go': redirectRoute('/private/hidden.html'),
};

const ALLOWED = ['/', '/files/doc.pdf?download=1', '/go', '/private/open.html', '/public.html', '/robots.txt', '/searchable.html'];
const DISALLOWED = ['/private/secret.html', '/files/doc.pdf', '/search?q=1', '/a/secret-x.html', '/private/hidden.html'];

describe('robots.txt', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let run: CliResult;

  before(async () => {
    site = await startRoutedSite([
      RULES_HOST,
      // 1: Crawl-delay 1 s for everyone.
      {
        '/robots.txt': robotsRoute('User-agent: *\nCrawl-delay: 1\n'),
        '/': pageRoute(['/p/a.html', '/p/b.html']),
        '/p/*': pageRoute(),
      },
      // 2: robots.txt is a 404: everything allowed.
      { '/': pageRoute(['/any.html']), '/any.html': pageRoute(), '/second.html': pageRoute() },
      // 3: robots.txt fails twice with 503, then gives rules.
      {
        '/robots.txt': (req, res, ctx) =>
          ctx.n <= 2 ? statusRoute(503)(req, res, ctx) : robotsRoute('User-agent: *\nDisallow: /no.html\n')(req, res, ctx),
        '/': pageRoute(['/no.html', '/yes.html']),
        '/no.html': pageRoute(),
        '/yes.html': pageRoute(),
      },
      // 4: robots.txt always fails: the host is never crawled.
      { '/robots.txt': statusRoute(500), '/': pageRoute(['/x.html']), '/x.html': pageRoute() },
      // 5: robots.txt redirects to the real file.
      {
        '/robots.txt': redirectRoute('/robots-moved.txt', 301),
        '/robots-moved.txt': robotsRoute('User-agent: *\nDisallow: /moved-no.html\n'),
        '/': pageRoute(['/moved-no.html', '/moved-yes.html']),
        '/moved-no.html': pageRoute(),
        '/moved-yes.html': pageRoute(),
      },
      // 6: robots.txt redirects to a Location that is not a URL.
      { '/robots.txt': redirectRoute('http://[bad/robots.txt', 301), '/': pageRoute(['/bad-loc.html']), '/bad-loc.html': pageRoute() },
    ]);
    data = await tempDir();
    // --warc: the request starts the crawler logged are what the Crawl-delay test measures.
    run = await runCli(['crawl', ...site.hosts.map((h) => `${h.origin}/`), '--data', data.path, ...FAST, '--warc'], { timeoutMs: 30_000 });
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('the crawl completes', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /done \(complete\)/);
  });

  test('our own user-agent group applies: allowed paths fetched once, disallowed ones never requested', () => {
    assert.deepEqual(requestedPaths(site, 0), ALLOWED);
    // Host 3's robots.txt fails twice, host 4's always: their retries are tested below.
    const retried = new Set([site.url(3, '/robots.txt'), site.url(4, '/robots.txt')]);
    for (const [url, n] of site.counts) if (!retried.has(url)) assert.equal(n, 1, `${url} requested ${n} times`);
  });

  test('each disallowed URL (the redirect target too) has a final ROBOTS_DISALLOWED errs record', async () => {
    for (const path of DISALLOWED) {
      const f = filesOf(site.url(0, path));
      assert.ok(!existsSync(join(data.path, f.links)), `links record for ${path}`);
      const rec = await readJson<ErrsRecord>(data.path, f.errs);
      assert.equal(rec.code, 'ROBOTS_DISALLOWED', path);
      assert.equal(rec.final, true, path);
      assert.equal(rec.attempts, 1, path);
    }
    const go = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/go')).links);
    assert.equal(go.status, 302);
    assert.deepEqual(go.links, [site.url(0, '/private/hidden.html')]);
  });

  test('robots.txt is fetched once per host and kept in robots/<host>.txt with its status', async () => {
    for (const i of [0, 1, 2, 5, 6]) assert.equal(site.count(site.url(i, '/robots.txt')), 1, `host ${i}`);
    const text = await readFile(join(data.path, 'robots', `${site.hosts[0]!.hostDir}.txt`), 'utf8');
    const header = `# mountcrawl robots fetchedAt=`;
    assert.ok(text.startsWith(header), text.slice(0, 100));
    assert.match(text.split('\n')[0]!, new RegExp(` status=200 url=${site.url(0, '/robots.txt')}$`));
    assert.equal(text.slice(text.indexOf('\n') + 1), RULES);
    const none = await readFile(join(data.path, 'robots', `${site.hosts[2]!.hostDir}.txt`), 'utf8');
    assert.match(none, /^# mountcrawl robots fetchedAt=\S+ status=404 /);
  });

  test('Crawl-delay: request starts on that host are at least the delay apart', async () => {
    assert.deepEqual(requestedPaths(site, 1), ['/', '/p/a.html', '/p/b.html', '/robots.txt']);
    const times = await loggedStarts(data.path, site.hosts[1]!.origin);
    assert.equal(times.length, 4, 'robots.txt and three pages');
    for (const g of gaps(times)) assert.ok(g >= 1000 - CLOCK_TOLERANCE_MS, `gap ${g.toFixed(0)} ms < Crawl-delay 1 s`);
  });

  test('a 4xx robots.txt allows everything', () => {
    assert.deepEqual(requestedPaths(site, 2), ['/', '/any.html', '/robots.txt']);
  });

  test('a 5xx robots.txt: the host waits, no page is requested before robots.txt succeeds', () => {
    const robots = site.times.get(site.url(3, '/robots.txt')) ?? [];
    assert.equal(robots.length, 3, 'two 503s, then the file');
    const pages = startTimes(site, 3, (p) => p !== '/robots.txt');
    assert.ok(pages.length > 0);
    assert.ok(pages[0]! > robots[2]!, 'a page was requested before robots.txt was had');
    assert.deepEqual(requestedPaths(site, 3), ['/', '/robots.txt', '/yes.html'], 'the rules of the file are obeyed');
  });

  test('a robots.txt that keeps failing: tried --max-attempts times, no page ever requested', () => {
    assert.deepEqual(requestedPaths(site, 4), ['/robots.txt']);
    assert.equal(site.count(site.url(4, '/robots.txt')), 3);
    assert.match(run.stderr, /cut: .*hostGaveUp 1/);
  });

  test('a redirected robots.txt is followed and obeyed', () => {
    assert.deepEqual(requestedPaths(site, 5), ['/', '/moved-yes.html', '/robots-moved.txt', '/robots.txt']);
  });

  test('a robots.txt redirect to an unusable Location counts as no robots.txt (everything allowed)', () => {
    assert.deepEqual(requestedPaths(site, 6), ['/', '/bad-loc.html', '/robots.txt']);
  });

  test('a later run reuses the cached robots.txt', { timeout: 20_000 }, async () => {
    const again = await runCli(['crawl', site.url(2, '/second.html'), '--data', data.path, ...FAST], { timeoutMs: 15_000 });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(site.count(site.url(2, '/second.html')), 1);
    for (const i of [0, 1, 2, 3, 5]) assert.equal(site.count(site.url(i, '/robots.txt')), i === 3 ? 3 : 1, `host ${i}`);
  });
});

describe('--crawl-delay-cap and --ignore-robots', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    site = await startRoutedSite([
      RULES_HOST,
      {
        '/robots.txt': robotsRoute('User-agent: *\nCrawl-delay: 30\n'),
        '/': pageRoute(['/c/a.html', '/c/b.html', '/c/c.html']),
        '/c/*': pageRoute(),
      },
    ]);
    data = await tempDir();
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('a Crawl-delay over the cap is honoured only up to the cap', { timeout: 90_000 }, async () => {
    const r = await runCli(['crawl', site.url(1, '/'), '--data', `${data.path}/cap`, ...FAST, '--crawl-delay-cap', '0.3', '--warc'], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(startTimes(site, 1).length, 5, 'robots.txt and four pages');
    const times = await loggedStarts(`${data.path}/cap`, site.hosts[1]!.origin);
    assert.equal(times.length, 5);
    for (const g of gaps(times)) {
      assert.ok(g >= 300 - CLOCK_TOLERANCE_MS, `gap ${g.toFixed(0)} ms < the 0.3 s cap`);
      // An uncapped gap would be the whole 30 s; a slow machine stretches a gap, never to that.
      assert.ok(g < 15_000, `gap ${g.toFixed(0)} ms: the 30 s Crawl-delay was not capped`);
    }
  });

  test('--ignore-robots fetches no robots.txt and every linked page', { timeout: 20_000 }, async () => {
    const r = await runCli(['crawl', site.url(0, '/'), '--data', `${data.path}/ignore`, ...FAST, '--ignore-robots'], {
      timeoutMs: 15_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(requestedPaths(site, 0), [...ALLOWED.filter((p) => p !== '/robots.txt'), ...DISALLOWED].sort());
    assert.ok(!existsSync(join(data.path, 'ignore', 'robots', `${site.hosts[0]!.hostDir}.txt`)), 'robots.txt stored');
  });
});
