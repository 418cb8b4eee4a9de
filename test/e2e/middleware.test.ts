import assert from 'node:assert/strict';
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { ErrsRecord, LinksRecord } from '../../src/store/records.js';
import { FAST, runCli, tempDir } from '../support/cli.js';
import { filesOf, readJson } from '../support/data-files.js';
import { page, type Route, sendHtml, startRoutedSite } from '../support/routed-site.js';

/** A runnable example of docs/hooks.md (docs/examples/). */
const example = (name: string): string => fileURLToPath(new URL(`../../../docs/examples/${name}`, import.meta.url));

const exists = (data: string, rel: string): Promise<boolean> =>
  access(join(data, rel)).then(
    () => true,
    () => false,
  );

describe('--hook middleware (docs/hooks.md, docs/examples/)', { timeout: 120_000 }, () => {
  let site: LoopbackSite;
  let tmp: { path: string; cleanup: () => Promise<void> };
  /** Request headers each path received, and the order of requests of the page paths. */
  const received = new Map<string, Record<string, string | string[] | undefined>>();
  const order: string[] = [];
  const recorded =
    (links: readonly string[] = [], body?: (n: number) => string): Route =>
    (req, res, ctx) => {
      received.set(ctx.path, req.headers);
      order.push(ctx.path);
      sendHtml(res, body ? body(ctx.n) : page(ctx.path, links));
    };

  before(async () => {
    site = await startRoutedSite([
      {
        '/': recorded(['/a.html', '/private/secret.html', '/offline.html']),
        '/a.html': recorded(),
        '/private/secret.html': recorded(),
        '/offline.html': recorded(),
        '/after-offline.html': recorded(),
      },
      {
        '/': recorded(['/blocked.html', '/busy.html', '/print/a.html', '/shop.html']),
        '/blocked.html': recorded([], () => page('Access denied')),
        '/busy.html': recorded([], (n) => page(n === 1 ? 'Please try again' : 'busy no more')),
        '/print/a.html': recorded(),
        '/shop.html': recorded(
          [],
          () =>
            '<html><ul><li class="item"><span class="name">tea</span><span class="price">3</span></li>' +
            '<li class="item"><span class="name">cake</span><span class="price">5</span></li></ul></html>',
        ),
      },
      {
        '/': recorded(['/p/1.html', '/p/2.html', '/p/3.html', '/important/1.html', '/important/2.html']),
        '/p/*': recorded(['/p/deep.html']),
        '/important/*': recorded(),
      },
      {
        '/': recorded(['/throws.html', '/hangs.html', '/after-hangs.html', '/page-hangs.html']),
        '/*': recorded(),
      },
      {
        '/': recorded(['/p/1.html', '/p/2.html', '/important/1.html']),
        '/p/*': recorded(),
        '/important/*': recorded(),
      },
    ]);
    tmp = await tempDir();
  });
  after(async () => {
    await site.close();
    await tmp.cleanup();
  });

  test('beforeFetch: headers the site received (after the built-ins, in module order), a skipped URL, an answer without the network', async () => {
    const data = join(tmp.path, 'before');
    // A second module sees what the built-in steps and the first module did.
    const second = join(tmp.path, 'second.mjs');
    await writeFile(
      second,
      "export function beforeFetch(r) { r.headers['x-seen'] = r.headers['x-crawl-token'] + '|' + r.headers['user-agent']; }\n",
    );
    const r = await runCli(['crawl', site.url(0, '/'), '--data', data, '--hook', example('before-fetch.mjs'), '--hook', second, ...FAST]);
    assert.equal(r.code, 0, r.stderr);
    const a = received.get('/a.html')!;
    assert.equal(a['x-crawl-token'], 'demo-token');
    assert.match(String(a['user-agent']), /^mountcrawl\/.* \(crawling 127\.0\.0\.\d+.*\)$/);
    assert.equal(a['x-seen'], `demo-token|${a['user-agent']}`);

    assert.equal(site.count(site.url(0, '/private/secret.html')), 0, 'a skipped URL is never requested');
    const skipped = await readJson<ErrsRecord>(data, filesOf(site.url(0, '/private/secret.html')).errs);
    assert.equal(skipped.code, 'HOOK_SKIPPED');
    assert.equal(skipped.final, true);

    assert.equal(site.count(site.url(0, '/offline.html')), 0, 'an answered URL is not requested');
    const offline = await readJson<LinksRecord>(data, filesOf(site.url(0, '/offline.html')).links);
    assert.ok(offline.links.includes(site.url(0, '/after-offline.html')), 'the answer is stored and its links followed');
    assert.ok(await exists(data, filesOf(site.url(0, '/offline.html')).html));
    assert.equal(site.count(site.url(0, '/after-offline.html')), 1);
  });

  test('afterFetch: a block page recorded as an error, a retry honoured, a drop; onPage: a list of items', async () => {
    const data = join(tmp.path, 'after');
    const r = await runCli([
      'crawl',
      site.url(1, '/'),
      '--data',
      data,
      '--hook',
      example('after-fetch.mjs'),
      '--hook',
      example('items.mjs'),
      ...FAST,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const blocked = filesOf(site.url(1, '/blocked.html'));
    assert.equal((await readJson<ErrsRecord>(data, blocked.errs)).code, 'HOOK_ERROR');
    assert.equal(await exists(data, blocked.links), false, 'a reclassified page is not stored as a page');

    assert.equal(site.count(site.url(1, '/busy.html')), 2, 'the retry was made');
    const busy = filesOf(site.url(1, '/busy.html'));
    assert.ok(await exists(data, busy.links), 'the second attempt is stored');
    assert.equal(await exists(data, busy.errs), false, 'its errs record is gone');

    const print = filesOf(site.url(1, '/print/a.html'));
    assert.equal((await readJson<ErrsRecord>(data, print.errs)).code, 'HOOK_DROPPED');

    const shop = await readJson<LinksRecord>(data, filesOf(site.url(1, '/shop.html')).links);
    assert.deepEqual(shop.data, [
      { name: 'tea', price: 3 },
      { name: 'cake', price: 5 },
    ]);
  });

  test('priority: the order of requests to one host', async () => {
    const data = join(tmp.path, 'priority');
    order.length = 0;
    const r = await runCli(['crawl', site.url(2, '/'), '--data', data, '--hook', example('priority.mjs'), '--per-host', '1', ...FAST]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(order.slice(0, 3), ['/', '/important/1.html', '/important/2.html'], order.join(' '));
    assert.deepEqual(order.slice(3, 6), ['/p/1.html', '/p/2.html', '/p/3.html'], 'then breadth first, in the order found');
    assert.equal(order[6], '/p/deep.html');
  });

  test('priority survives a restart: computed again when the reseed offers the links found on disk', async () => {
    const data = join(tmp.path, 'priority-reseed');
    const first = await runCli(['crawl', site.url(4, '/'), '--data', data, '--max-pages', '1', ...FAST]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(site.count(site.url(4, '/p/1.html')), 0, 'the first run stopped after the home page');
    order.length = 0;
    // A new run: its --max-pages replaces the first run's (the crawl's settings, docs/operations.md).
    const r = await runCli(['crawl', '--data', data, '--hook', example('priority.mjs'), '--per-host', '1', '--max-pages', '100', ...FAST]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(order, ['/important/1.html', '/p/1.html', '/p/2.html']);
  });

  test('a hook that throws or hangs loses no page: fallbacks, counted in the summary', async () => {
    const data = join(tmp.path, 'faulty');
    const faulty = join(tmp.path, 'faulty.mjs');
    await writeFile(
      faulty,
      `const never = () => new Promise(() => {});
export function beforeFetch(r) { if (r.url.endsWith('/throws.html')) throw new Error('before bug'); if (r.url.endsWith('/hangs.html')) return never(); }
export function afterFetch(r) { if (r.url.endsWith('/after-hangs.html')) return never(); }
export function onPage(p) { if (p.url.endsWith('/page-hangs.html')) return never(); return { data: 1 }; }
export function priority(url) { if (url.endsWith('/throws.html')) throw new Error('priority bug'); return 0; }
`,
    );
    const r = await runCli(['crawl', site.url(3, '/'), '--data', data, '--hook', faulty, '--hook-timeout', '0.3', ...FAST]);
    assert.equal(r.code, 0, r.stderr);
    for (const path of ['/', '/throws.html', '/hangs.html', '/after-hangs.html', '/page-hangs.html']) {
      assert.ok(await exists(data, filesOf(site.url(3, path)).links), `${path} stored`);
    }
    const hung = await readJson<LinksRecord>(data, filesOf(site.url(3, '/page-hangs.html')).links);
    assert.equal(hung.data, undefined, 'the page whose onPage hung is stored as found');
    assert.match(r.stderr, /--hook threw 2 times, timed out 3 times/);
  });
});
