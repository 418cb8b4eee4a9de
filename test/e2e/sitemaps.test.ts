import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { ErrsRecord, LinksRecord } from '../../src/store/records.js';
import { FAST, runCli, tempDir } from '../support/cli.js';
import { filesOf, readJson } from '../support/data-files.js';
import { pageRoute, startRoutedSite, type Route } from '../support/routed-site.js';

const xml =
  (type: string): Route =>
  (_req, res, ctx) => {
    const body = sitemapBodies.get(ctx.path)!(ctx.host.origin);
    res.writeHead(200, { 'content-type': type, 'content-length': body.length });
    res.end(body);
  };
const urlset = (origin: string, entries: readonly [string, string?][]): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries
    .map(([p, lastmod]) => `<url><loc>${origin}${p}</loc>${lastmod === undefined ? '' : `<lastmod>${lastmod}</lastmod>`}</url>`)
    .join('')}</urlset>`;

/** What `<lastmod>` /only-b/1 has in /sitemap-b.xml (a test changes it). */
let lastmodB = '2020-01-01';
const sitemapBodies = new Map<string, (origin: string) => Buffer>([
  [
    '/sitemap-index.xml',
    (o) =>
      Buffer.from(
        `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${o}/sitemap-a.xml.gz</loc></sitemap><sitemap><loc>${o}/sitemap-b.xml</loc><lastmod>2020-01-01</lastmod></sitemap></sitemapindex>`,
      ),
  ],
  ['/sitemap-a.xml.gz', (o) => gzipSync(urlset(o, [['/only-a/1'], ['/only-a/2']]))],
  ['/sitemap-b.xml', (o) => Buffer.from(urlset(o, [['/only-b/1', lastmodB], ['/']]))],
  ['/bad.xml', () => Buffer.from('<html><body>this is not a sitemap</body></html>')],
  ['/feed.xml', (o) => Buffer.from(`<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="${o}/only-feed/1"/></entry></feed>`)],
]);

const ROUTES = {
  '/robots.txt': ((_req, res, ctx) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`User-agent: *\nDisallow: /private/\nSitemap: ${ctx.host.origin}/sitemap-index.xml\n`);
  }) as Route,
  '/': pageRoute([]),
  '/only-a/*': pageRoute([]),
  '/only-b/*': pageRoute([]),
  '/sitemap-index.xml': xml('application/xml'),
  '/sitemap-a.xml.gz': xml('application/gzip'),
  '/sitemap-b.xml': xml('text/xml'),
  '/bad.xml': xml('application/xml'),
  '/feed.xml': xml('application/atom+xml'),
  '/only-feed/*': pageRoute([]),
};

describe('sitemaps (docs/sitemaps.md)', () => {
  let site: LoopbackSite;
  before(async () => {
    site = await startRoutedSite([ROUTES]);
  });
  after(async () => {
    await site.close();
  });

  test("without --sitemaps, robots.txt's Sitemap lines are not followed (opt-in)", async () => {
    const data = await tempDir();
    try {
      const before = site.count(site.url(0, '/sitemap-index.xml'));
      const r = await runCli(['crawl', site.url(0, '/'), '--data', data.path, ...FAST]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(site.count(site.url(0, '/sitemap-index.xml')), before);
      assert.equal(site.count(site.url(0, '/only-a/1')), 0);
    } finally {
      await data.cleanup();
    }
  });

  test('--sitemaps: an index with a gzipped child and an Atom feed; URLs only in them are crawled; a malformed --sitemap is one errs record', async () => {
    const data = await tempDir();
    const paths = [
      '/sitemap-index.xml',
      '/sitemap-a.xml.gz',
      '/sitemap-b.xml',
      '/bad.xml',
      '/only-a/1',
      '/only-a/2',
      '/only-b/1',
      '/',
      '/feed.xml',
      '/only-feed/1',
    ];
    const before = new Map(paths.map((p) => [p, site.count(site.url(0, p))]));
    const fetched = (p: string): number => site.count(site.url(0, p)) - before.get(p)!;
    try {
      const r = await runCli([
        'crawl',
        site.url(0, '/'),
        '--sitemaps',
        '--sitemap',
        site.url(0, '/bad.xml'),
        '--sitemap',
        site.url(0, '/feed.xml'),
        '--data',
        data.path,
        ...FAST,
      ]);
      assert.ok(r.code === 0 || r.code === 5, `exit ${r.code}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /INTERNAL/);
      for (const p of paths) assert.equal(fetched(p), 1, `${p} fetched ${fetched(p)} times`);
      const index = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/sitemap-index.xml')).links);
      assert.equal(index.sitemap?.kind, 'index');
      assert.deepEqual([...index.links].sort(), [site.url(0, '/sitemap-a.xml.gz'), site.url(0, '/sitemap-b.xml')]);
      const a = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/sitemap-a.xml.gz')).links);
      assert.equal(a.sitemap?.kind, 'urlset');
      assert.equal(a.html, null);
      const page = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/only-a/1')).links);
      assert.equal(page.status, 200);
      const bad = await readJson<ErrsRecord>(data.path, filesOf(site.url(0, '/bad.xml')).errs);
      assert.equal(bad.code, 'SITEMAP_MALFORMED');
      assert.equal(bad.final, true);
      // A second run without --recrawl-after fetches nothing again, sitemaps included.
      const again = await runCli(['crawl', site.url(0, '/'), '--sitemaps', '--data', data.path, ...FAST]);
      assert.ok(again.code === 0 || again.code === 5, again.stderr);
      assert.equal(fetched('/sitemap-index.xml'), 1);
      assert.equal(fetched('/only-a/1'), 1);
    } finally {
      await data.cleanup();
    }
  });

  test('with --recrawl-after, a lastmod newer than the last fetch makes a page due now; the others wait', async () => {
    const data = await tempDir();
    const count = (p: string): number => site.count(site.url(0, p));
    try {
      const first = { b: count('/only-b/1'), a: count('/only-a/1'), index: count('/sitemap-index.xml') };
      const r = await runCli(['crawl', site.url(0, '/'), '--sitemaps', '--recrawl-after', '1d', '--data', data.path, ...FAST]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(count('/only-b/1'), first.b + 1);
      assert.equal(count('/only-a/1'), first.a + 1);
      // The page changed after it was fetched: its sitemap says so.
      lastmodB = new Date(Date.now() + 60_000).toISOString();
      const again = await runCli(['crawl', site.url(0, '/'), '--sitemaps', '--recrawl-after', '1d', '--data', data.path, ...FAST]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(count('/sitemap-index.xml'), first.index + 2, 'the sitemaps are fetched again at each run');
      assert.equal(count('/only-b/1'), first.b + 2, 'the page whose lastmod is newer was not fetched again');
      assert.equal(count('/only-a/1'), first.a + 1, 'a page without a newer lastmod was fetched again');
      const rec = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/only-b/1')).links);
      assert.equal(rec.history?.length, 2);
    } finally {
      lastmodB = '2020-01-01';
      await data.cleanup();
    }
  });
});
