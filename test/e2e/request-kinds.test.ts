import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, jsonSummary, runCli, tempDir } from '../support/cli.js';
import { page, type Route, sendHtml, startRoutedSite } from '../support/routed-site.js';

/**
 * Every request takes one path (src/request/pipeline.ts): robots.txt and sitemaps go through
 * the same headers, --header, --cookie-file and --hook steps as pages, and a hook sees what
 * each request is for (`request.kind`, docs/hooks.md).
 */
describe('one request pipeline: robots.txt, sitemaps and pages', { timeout: 120_000 }, () => {
  let site: LoopbackSite;
  let tmp: { path: string; cleanup: () => Promise<void> };
  /** Request headers each path of each host received (the last request of the path). */
  const received = new Map<string, IncomingHttpHeaders>();
  const seen = (host: number, path: string): IncomingHttpHeaders | undefined => received.get(`${host}${path}`);
  const recorded =
    (answer: Route): Route =>
    (req, res, ctx) => {
      received.set(`${ctx.host.index}${ctx.path}`, req.headers);
      return answer(req, res, ctx);
    };
  const robots = (sitemap: boolean): Route =>
    recorded((_req, res, ctx) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`User-agent: *\nDisallow: /private/\n${sitemap ? `Sitemap: ${ctx.host.origin}/sitemap.xml\n` : ''}`);
    });
  const html = (links: readonly string[] = []): Route => recorded((_req, res, ctx) => sendHtml(res, page(ctx.path, links)));
  const sitemapXml: Route = recorded((_req, res, ctx) => {
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.end(
      `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${ctx.host.origin}/from-sitemap.html</loc></url></urlset>`,
    );
  });

  before(async () => {
    const routes = {
      '/robots.txt': robots(true),
      '/': html(['/a.html']),
      '/a.html': html(),
      '/from-sitemap.html': html(),
      '/sitemap.xml': sitemapXml,
    };
    site = await startRoutedSite([routes, routes, routes, { ...routes, '/robots.txt': robots(false) }]);
    tmp = await tempDir();
  });
  after(async () => {
    await site.close();
    await tmp.cleanup();
  });

  test('a beforeFetch header reaches robots.txt, the sitemap and the pages; the hook sees request.kind of each', async () => {
    const hook = join(tmp.path, 'kinds.mjs');
    await writeFile(
      hook,
      "export function beforeFetch(request) { request.headers['x-token'] = 'secret'; request.headers['x-kind'] = String(request.kind); }\n",
    );
    const r = await runCli(['crawl', site.url(0, '/'), '--sitemaps', '--data', join(tmp.path, 'kinds'), ...FAST, '--hook', hook]);
    assert.equal(r.code, 0, r.stderr);
    for (const [path, kind] of [
      ['/robots.txt', 'robots'],
      ['/sitemap.xml', 'sitemap'],
      ['/', 'page'],
      ['/a.html', 'page'],
      ['/from-sitemap.html', 'page'],
    ] as const) {
      assert.equal(seen(0, path)?.['x-token'], 'secret', `the hook's header on ${path}`);
      assert.equal(seen(0, path)?.['x-kind'], kind, `request.kind of ${path}`);
    }
  });

  test('--header and --cookie-file reach robots.txt as they reach pages', async () => {
    const host = site.hosts[1]!;
    const cookies = join(tmp.path, 'cookies.txt');
    await writeFile(cookies, `# Netscape HTTP Cookie File\n${host.address}\tFALSE\t/\tFALSE\t0\tsession\tabc\n`);
    const r = await runCli([
      'crawl',
      site.url(1, '/'),
      '--data',
      join(tmp.path, 'controls'),
      ...FAST,
      '--header',
      'X-Team: crawl',
      '--cookie-file',
      cookies,
    ]);
    assert.equal(r.code, 0, r.stderr);
    for (const path of ['/robots.txt', '/']) {
      assert.equal(seen(1, path)?.['x-team'], 'crawl', `--header on ${path}`);
      assert.equal(seen(1, path)?.cookie, 'session=abc', `--cookie-file on ${path}`);
      assert.match(String(seen(1, path)?.['user-agent']), /mountcrawl/i, `the user agent on ${path}`);
    }
  });

  test('a beforeFetch that returns the request it was given sends it, with the headers it set (not an unknown action)', async () => {
    const hook = join(tmp.path, 'returns.mjs');
    await writeFile(hook, "export function beforeFetch(request) { request.headers['x-returned'] = 'yes'; return request; }\n");
    const r = await runCli(['crawl', site.url(2, '/'), '--data', join(tmp.path, 'returns'), ...FAST, '--hook', hook, '--json']);
    assert.equal(r.code, 0, r.stderr);
    for (const path of ['/robots.txt', '/', '/a.html'])
      assert.equal(seen(2, path)?.['x-returned'], 'yes', `the returned request's header on ${path}`);
    assert.doesNotMatch(r.stderr, /unknown action/);
    assert.equal(jsonSummary<{ hookErrors?: number }>(r).hookErrors ?? 0, 0, 'no hook error counted');
  });

  test('a beforeFetch that skips robots.txt: it is read anyway, with one warning', async () => {
    const hook = join(tmp.path, 'skip-robots.mjs');
    await writeFile(
      hook,
      "export function beforeFetch(request) { if (request.kind === 'robots') return { action: 'skip', reason: 'no robots here' }; }\n",
    );
    const r = await runCli(['crawl', site.url(3, '/'), '--data', join(tmp.path, 'skip'), ...FAST, '--hook', hook]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(seen(3, '/robots.txt') !== undefined, 'robots.txt requested');
    assert.ok(seen(3, '/a.html') !== undefined, 'the pages are crawled');
    assert.equal(r.stderr.split('skipped robots.txt: it is read anyway').length - 1, 1, r.stderr);
  });
});
