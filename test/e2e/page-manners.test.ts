import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, runCli, tempDir } from '../support/cli.js';
import { filesOf, listFiles, readJson } from '../support/data-files.js';
import { pageRoute, requestedPaths, sendHtml, startRoutedSite, type HostRoutes } from '../support/routed-site.js';

const ROUTES: HostRoutes = {
  '/': pageRoute(['/meta-nofollow', '/meta-noindex', '/xrobots', '/frames', '/relnf']),
  '/meta-nofollow': (_req, res) =>
    sendHtml(res, '<html><head><meta name="robots" content="nofollow"></head><a href="/never-1">x</a></html>'),
  '/meta-noindex': (_req, res) => sendHtml(res, '<html><head><meta name="robots" content="noindex"></head><a href="/child">x</a></html>'),
  '/xrobots': (_req, res) => sendHtml(res, '<a href="/never-2">x</a>', { 'x-robots-tag': 'noindex, nofollow' }),
  '/frames': (_req, res) => sendHtml(res, '<frameset><frame src="/frame.html"></frameset><iframe src="/toc.html"></iframe>'),
  '/relnf': (_req, res) => sendHtml(res, '<a rel="nofollow" href="/nofollowed">x</a>'),
  '/child': pageRoute([]),
  '/frame.html': pageRoute([]),
  '/toc.html': pageRoute([]),
  '/nofollowed': pageRoute([]),
};

async function crawl(extra: string[] = []): Promise<{ site: LoopbackSite; data: string; cleanup: () => Promise<void> }> {
  const site = await startRoutedSite([ROUTES]);
  const tmp = await tempDir();
  const data = join(tmp.path, 'data');
  const r = await runCli(['crawl', site.url(0, '/'), '--data', data, ...FAST, ...extra]);
  assert.equal(r.code, 0, r.stderr);
  return { site, data, cleanup: async () => (await site.close(), await tmp.cleanup()) };
}

describe('robots meta tags, X-Robots-Tag, rel=nofollow and frames', { timeout: 60_000 }, () => {
  test('by default: nofollow pages lead nowhere, noindex pages are not kept but followed, frames and rel=nofollow links are followed', async () => {
    const { site, data, cleanup } = await crawl();
    try {
      const paths = requestedPaths(site, 0);
      assert.ok(!paths.includes('/never-1') && !paths.includes('/never-2'), paths.join(' '));
      for (const p of ['/child', '/frame.html', '/toc.html', '/nofollowed'])
        assert.ok(paths.includes(p), `${p} not requested: ${paths.join(' ')}`);
      const noindex = filesOf(site.url(0, '/meta-noindex'));
      const rec = await readJson<{ html: string | null; robots: string[]; links: string[] }>(data, noindex.links);
      assert.equal(rec.html, null);
      assert.deepEqual(rec.robots, ['noindex']);
      assert.deepEqual(rec.links, [site.url(0, '/child')]);
      const files = await listFiles(data);
      assert.ok(!files.includes(noindex.html), 'the noindex page is not kept');
      const x = await readJson<{ html: string | null; robots: string[]; links: string[] }>(data, filesOf(site.url(0, '/xrobots')).links);
      assert.deepEqual([x.html, x.robots, x.links], [null, ['noindex', 'nofollow'], []]);
      const nf = await readJson<{ robots: string[]; links: string[] }>(data, filesOf(site.url(0, '/meta-nofollow')).links);
      assert.deepEqual([nf.robots, nf.links], [['nofollow'], []]);
      assert.ok(files.includes(filesOf(site.url(0, '/meta-nofollow')).html), 'a nofollow page is kept');
    } finally {
      await cleanup();
    }
  });

  test('--obey-rel-nofollow leaves rel="nofollow" links alone', async () => {
    const { site, cleanup } = await crawl(['--obey-rel-nofollow']);
    try {
      assert.ok(!requestedPaths(site, 0).includes('/nofollowed'));
      assert.ok(requestedPaths(site, 0).includes('/toc.html'));
    } finally {
      await cleanup();
    }
  });
});
