import assert from 'node:assert/strict';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { LinksRecord } from '../../src/store/records.js';
import { CHANGING_SITE_FLAGS, ChangingSite } from '../support/changing-site.js';
import { FAST, runCli, tempDir } from '../support/cli.js';
import { filesOf, readJson } from '../support/data-files.js';
import { pageRoute, redirectRoute, sendHtml, startRoutedSite, page } from '../support/routed-site.js';

const PAGES = 30;

/** Files under errs/ of a data directory (none: no URL failed). */
async function errsFiles(data: string): Promise<string[]> {
  try {
    return await readdir(join(data, 'errs'), { recursive: true });
  } catch {
    return [];
  }
}

describe('recrawl: --frontier-cap, status, a 304 after a redirect and from a hook (docs/recrawl.md)', () => {
  let site: ChangingSite;
  before(async () => {
    site = await ChangingSite.start(PAGES);
  });
  after(async () => {
    await site.close();
  });

  test('pages due at load obey --frontier-cap and are each revisited once; status shows when the next are due', async () => {
    const data = await tempDir();
    const cleanups = [data.cleanup];
    try {
      const first = await runCli([
        'crawl',
        site.url('/p/0'),
        '--data',
        data.path,
        ...CHANGING_SITE_FLAGS,
        '--recrawl-after',
        '1d',
        ...FAST,
      ]);
      assert.equal(first.code, 0, first.stderr);
      const s1 = await runCli(['status', '--data', data.path, '--json']);
      assert.equal(s1.code, 0, s1.stderr);
      const r1 = (JSON.parse(s1.stdout) as { recrawl: { scheduled: number; dueNow: number; dueNextDay: number; nextDueAt: string | null } })
        .recrawl;
      assert.equal(r1.scheduled, PAGES);
      assert.equal(r1.dueNow, 0, JSON.stringify(r1));
      assert.ok(r1.nextDueAt !== null && Date.parse(r1.nextDueAt) > Date.now() + 23 * 3_600_000, JSON.stringify(r1));
      // A directory crawled with 0s: every page is due at the next run.
      const zero = await tempDir();
      cleanups.push(zero.cleanup);
      const z = await runCli(['crawl', site.url('/p/0'), '--data', zero.path, ...CHANGING_SITE_FLAGS, '--recrawl-after', '0s', ...FAST]);
      assert.equal(z.code, 0, z.stderr);
      const before = Array.from({ length: PAGES }, (_, i) => site.site.count(site.url(`/p/${i}`)));
      const again = await runCli([
        'crawl',
        site.url('/p/0'),
        '--data',
        zero.path,
        ...CHANGING_SITE_FLAGS,
        '--recrawl-after',
        '0s',
        '--frontier-cap',
        '3',
        ...FAST,
      ]);
      assert.equal(again.code, 0, again.stderr);
      for (let i = 0; i < PAGES; i++)
        assert.equal(site.site.count(site.url(`/p/${i}`)), before[i]! + 1, `/p/${i} not revisited exactly once`);
      const s2 = await runCli(['status', '--data', zero.path]);
      assert.equal(s2.code, 0, s2.stderr);
      assert.match(s2.stdout, new RegExp(`^recrawl +${PAGES} scheduled: ${PAGES} due now`, 'm'));
    } finally {
      for (const c of cleanups) await c();
    }
  });

  test("a --hook's 304 to a revisit stands for the server's: not modified, the stored html kept, no request", async () => {
    const data = await tempDir();
    const hook = join(data.path, '..', `hook-304-${process.pid}.mjs`);
    try {
      const first = await runCli(['crawl', site.url('/p/0'), '--data', data.path, ...CHANGING_SITE_FLAGS, ...FAST]);
      assert.equal(first.code, 0, first.stderr);
      const target = site.url('/p/3');
      await writeFile(
        hook,
        `export function beforeFetch(r) { if (r.url === ${JSON.stringify(target)}) return { action: 'respond', status: 304, body: '' }; }\n`,
      );
      const html = await readFile(join(data.path, filesOf(target).html), 'utf8');
      const asked = site.site.count(target);
      const again = await runCli([
        'crawl',
        site.url('/p/0'),
        '--data',
        data.path,
        ...CHANGING_SITE_FLAGS,
        '--recrawl-after',
        '0s',
        '--hook',
        hook,
        ...FAST,
      ]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(site.site.count(target), asked, 'the server was asked although the hook answered');
      const rec = await readJson<LinksRecord>(data.path, filesOf(target).links);
      assert.deepEqual({ status: rec.history?.at(-1)?.status, changed: rec.history?.at(-1)?.changed }, { status: 304, changed: false });
      assert.equal(await readFile(join(data.path, rec.html!), 'utf8'), html);
      assert.deepEqual(await errsFiles(data.path), []);
    } finally {
      await data.cleanup();
      await rm(hook, { force: true });
    }
  });
});

describe('recrawl: a 304 after a redirect', () => {
  let routed: LoopbackSite;
  const ETAG = '"target-v1"';
  before(async () => {
    routed = await startRoutedSite([
      {
        '/': pageRoute(['/r']),
        '/r': redirectRoute('/target', 301),
        '/target': (req, res) => {
          if (req.headers['if-none-match'] === ETAG) {
            res.writeHead(304, { etag: ETAG });
            return void res.end();
          }
          sendHtml(res, page('target', []), { etag: ETAG });
        },
      },
    ]);
  });
  after(async () => {
    await routed.close();
  });

  test('the redirect is recorded again unchanged, its target answers 304 to its own validators; nothing counts as a change or an error', async () => {
    const data = await tempDir();
    try {
      const first = await runCli(['crawl', routed.url(0, '/'), '--data', data.path, ...FAST]);
      assert.equal(first.code, 0, first.stderr);
      const r0 = await readJson<LinksRecord>(data.path, filesOf(routed.url(0, '/r')).links);
      assert.equal(r0.finalUrl, routed.url(0, '/target'));
      const html = await readFile(join(data.path, filesOf(routed.url(0, '/target')).html), 'utf8');
      const again = await runCli(['crawl', routed.url(0, '/'), '--data', data.path, '--recrawl-after', '0s', ...FAST]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(routed.count(routed.url(0, '/r')), 2);
      assert.equal(routed.count(routed.url(0, '/target')), 2, 'the target was not revisited exactly once');
      const target = await readJson<LinksRecord>(data.path, filesOf(routed.url(0, '/target')).links);
      assert.deepEqual(
        { status: target.history?.at(-1)?.status, changed: target.history?.at(-1)?.changed },
        { status: 304, changed: false },
      );
      assert.equal(await readFile(join(data.path, target.html!), 'utf8'), html);
      const r = await readJson<LinksRecord>(data.path, filesOf(routed.url(0, '/r')).links);
      assert.equal(r.status, 301);
      assert.equal(r.finalUrl, routed.url(0, '/target'));
      assert.equal(r.history?.at(-1)?.changed, false, JSON.stringify(r.history));
      assert.deepEqual(await errsFiles(data.path), []);
    } finally {
      await data.cleanup();
    }
  });
});
