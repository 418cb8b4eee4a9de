import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { CHANGING_SITE_FLAGS, ChangingSite } from '../support/changing-site.js';
import { FAST, runCli, tempDir } from '../support/cli.js';
import { filesOf, readJson } from '../support/data-files.js';
import type { LinksRecord } from '../../src/store/records.js';

const PAGES = 40;
const CHANGED = [3, 8, 0, PAGES - 1]; // Last-Modified, ETag, neither (signature), the deepest

describe('recrawl: --recrawl-after with conditional GET (docs/recrawl.md)', () => {
  let site: ChangingSite;
  let data: { path: string; cleanup: () => Promise<void> };
  const crawl = (extra: string[] = []): ReturnType<typeof runCli> =>
    runCli(['crawl', site.url('/p/0'), '--data', data.path, ...CHANGING_SITE_FLAGS, ...FAST, ...extra]);
  const record = (path: string): Promise<LinksRecord> => readJson<LinksRecord>(data.path, filesOf(site.url(path)).links);
  let firstBytes = 0;

  before(async () => {
    site = await ChangingSite.start(PAGES);
    data = await tempDir();
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('a first pass fetches every page; without --recrawl-after a second run fetches nothing', async () => {
    const r = await crawl();
    assert.equal(r.code, 0, r.stderr);
    for (let i = 0; i < PAGES; i++) assert.equal(site.site.count(site.url(`/p/${i}`)), 1, `/p/${i}`);
    firstBytes = site.bodyBytes;
    const again = await crawl();
    assert.equal(again.code, 0, again.stderr);
    assert.equal(site.bodyBytes, firstBytes, 'a run without --recrawl-after fetched pages again');
    for (let i = 0; i < PAGES; i++) assert.equal(site.site.count(site.url(`/p/${i}`)), 1, `/p/${i} fetched again`);
  });

  test("a second pass over the unchanged site with --recrawl-after 0s costs at most 5% of the first pass's body bytes", async () => {
    const before = site.bodyBytes;
    const r = await crawl(['--recrawl-after', '0s']);
    assert.equal(r.code, 0, r.stderr);
    for (let i = 0; i < PAGES; i++) assert.equal(site.site.count(site.url(`/p/${i}`)), 2, `/p/${i} not revisited once`);
    const second = site.bodyBytes - before;
    assert.ok(second <= 0.05 * firstBytes, `second pass ${second} bytes, first ${firstBytes}`);
    assert.ok(site.notModified >= PAGES - 1, `only ${site.notModified} answers were 304`);
    for (let i = 0; i < PAGES; i++) {
      const rec = await record(`/p/${i}`);
      assert.equal(rec.history?.at(-1)?.changed, false, `/p/${i} counted as changed: ${JSON.stringify(rec.history)}`);
    }
  });

  test('a third pass finds every changed page, stores it anew and follows its new links; no 304 counts as a change', async () => {
    for (const i of CHANGED) site.bump(i);
    const r = await crawl(['--recrawl-after', '0s']);
    assert.equal(r.code, 0, r.stderr);
    for (let i = 0; i < PAGES; i++) {
      const rec = await record(`/p/${i}`);
      const last = rec.history!.at(-1)!;
      assert.equal(last.changed, CHANGED.includes(i), `/p/${i}: ${JSON.stringify(rec.history)}`);
      if (last.status === 304) assert.equal(last.changed, false);
      if (CHANGED.includes(i)) {
        const html = await readFile(`${data.path}/${rec.html}`, 'utf8');
        assert.match(html, /version 1\./, `/p/${i} html not replaced`);
        assert.equal(rec.changedAt, last.at);
      }
    }
    assert.equal(site.site.count(site.url('/new/3')), 1, 'the new link of a changed page was not followed');
  });

  test('status says how many pages are due now and when the next are due', async () => {
    const s = await runCli(['status', '--data', data.path, '--json']);
    assert.equal(s.code, 0, s.stderr);
    const recrawl = (JSON.parse(s.stdout) as { recrawl: { scheduled: number; dueNow: number; nextDueAt: string | null } }).recrawl;
    // --recrawl-after 0s: every page is due again at once.
    assert.ok(recrawl.scheduled >= PAGES, JSON.stringify(recrawl));
    assert.equal(recrawl.dueNow, recrawl.scheduled);
    assert.equal(recrawl.nextDueAt, null);
    const text = await runCli(['status', '--data', data.path]);
    assert.match(text.stdout, new RegExp(`^recrawl +${recrawl.scheduled} scheduled: ${recrawl.dueNow} due now`, 'm'));
  });
});
