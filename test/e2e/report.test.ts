import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import type { ReportData } from '../../src/report/report-data.js';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { BIN, FAST, runCli, spawnCli, tempDir } from '../support/cli.js';
import { listFiles } from '../support/data-files.js';
import { startTestSite } from '../support/test-site.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
/** Where the screenshot is left for a person to look at. */
const SCREENSHOT = join(dirname(BIN), '..', 'dist', 'test-output', 'report.png');

async function report(data: string, file: string): Promise<ReportData> {
  const html = await runCli(['report', '--data', data, '--out', file]);
  assert.equal(html.code, 0, html.stderr);
  const json = await runCli(['report', '--data', data, '--json']);
  assert.equal(json.code, 0, json.stderr);
  return JSON.parse(json.stdout) as ReportData;
}

interface Shown {
  nums: Record<string, { value: number; text: string }>;
  /** Painted pixels of each chart's canvas. */
  charts: Record<string, number>;
  hosts: string[][];
}

/** Runs in the page (a string: the test is compiled without the DOM's types). */
const READ_PAGE = `(() => {
  const nums = {};
  for (const el of document.querySelectorAll('[data-num]')) nums[el.dataset.num] = { value: Number(el.dataset.value), text: el.textContent };
  const charts = {};
  for (const c of document.querySelectorAll('canvas')) {
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let painted = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] > 0) painted++;
    charts[c.id] = painted;
  }
  const hosts = [...document.querySelectorAll('#hosts tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent));
  return { nums, charts, hosts };
})()`;

/** Opens a report: no console errors, no request but the file itself; returns what the page shows. */
async function open(browser: Browser, file: string, screenshot?: string) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) problems.push(`network: ${r.url()}`);
  });
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30_000 });
  const shown = await page.evaluate<Shown>(READ_PAGE);
  if (screenshot !== undefined) {
    await mkdir(dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
  }
  return { page, problems, shown };
}

describe('mountcrawl report', { timeout: 180_000 }, () => {
  let browser: Browser | undefined;
  let skip: string | undefined;
  let site: LoopbackSite;
  let gen: LoopbackSite;
  let tmp: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    if (!existsSync(CHROMIUM)) skip = `${CHROMIUM} is not installed (.ci/run installs Debian's chromium)`;
    else browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    site = await startTestSite();
    gen = await startGeneratedSite({ hosts: 3, pagesPerHost: 60, linksPerPage: 3, latencyMs: 5 });
    tmp = await tempDir();
  });
  after(async () => {
    await browser?.close();
    await site.close();
    await gen.close();
    await tmp.cleanup();
  });

  test('a crawl: charts drawn, numbers equal to report --json, hosts sortable, a screenshot', async (t) => {
    const data = join(tmp.path, 'crawl');
    const seeds = [site.url(0, '/'), site.url(1, '/'), ...gen.hosts.map((h) => `${h.origin}/`)];
    const r = await runCli(['crawl', ...seeds, '--data', data, '--warc', ...FAST]);
    assert.equal(r.code, 0, r.stderr);
    const file = join(tmp.path, 'report.html');
    const json = await report(data, file);
    assert.equal(json.totals.pages, 20 + 180);
    assert.equal(json.totals.errors, 1);
    assert.equal(json.status['404'], 1);
    assert.equal(json.totals.hosts, 5);
    const html = await readFile(file, 'utf8');
    assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=/, 'scripts and styles inline');
    if (skip) return t.skip(skip);
    const { page, problems, shown } = await open(browser!, file, SCREENSHOT);
    t.diagnostic(`screenshot: ${SCREENSHOT}`);
    assert.deepEqual(problems, []);
    for (const id of ['chart-timeline', 'chart-status', 'chart-types', 'chart-depth', 'chart-errors', 'chart-links']) {
      assert.ok((shown.charts[id] ?? 0) > 500, `${id} is drawn (${shown.charts[id]} pixels)`);
    }
    const totals = json.totals as unknown as Record<string, number>;
    for (const [key, n] of Object.entries(shown.nums)) {
      const expected = key === 'nodes' ? json.nodes.length : totals[key];
      assert.equal(n.value, expected, key);
      if (key !== 'bytes') assert.equal(Number(n.text.replace(/,/g, '')), expected, `${key} as shown`);
    }
    assert.deepEqual(
      shown.hosts.map((row) => [row[0], Number(row[1]!.replace(/,/g, '')), Number(row[3])]),
      json.hosts.map((h) => [h.host, h.pages, h.errors]),
    );
    // Sorting by a column in the page.
    await page.click('#hosts th[data-key="pages"]');
    const column = (): Promise<number[]> =>
      page.evaluate<number[]>(`[...document.querySelectorAll('#hosts tbody tr td:nth-child(2)')].map((td) => Number(td.dataset.v))`);
    const asc = await column();
    assert.deepEqual(
      asc,
      [...asc].sort((a, b) => a - b),
    );
    await page.click('#hosts th[data-key="pages"]');
    const desc = await column();
    assert.deepEqual(desc, [...asc].reverse());
    // At a phone's width nothing makes the page wider than the screen (wide tables scroll in their card).
    await page.setViewportSize({ width: 390, height: 844 });
    // The charts resize on the next frames (a ResizeObserver): measured once they have.
    const measure = (): Promise<{ page: number; screen: number }> =>
      page.evaluate<{ page: number; screen: number }>(
        `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r({ page: document.documentElement.scrollWidth, screen: document.documentElement.clientWidth }))))`,
      );
    let widths = await measure();
    for (let i = 0; i < 20 && widths.page !== widths.screen; i++) {
      await new Promise((r) => setTimeout(r, 100));
      widths = await measure();
    }
    assert.equal(widths.page, widths.screen, 'no horizontal overflow at 390 px');
    await page.close();
  });

  test('a data directory with no pages yet, and one with only errors, give a report', async (t) => {
    const empty = join(tmp.path, 'empty');
    const seeded = await runCli(['seed', site.url(0, '/'), '--data', empty]);
    assert.equal(seeded.code, 0, seeded.stderr);
    const errorsOnly = join(tmp.path, 'errors-only');
    const r = await runCli(['crawl', site.url(0, '/nothing-here'), site.url(1, '/nor-here'), '--data', errorsOnly, ...FAST]);
    // Every seed failed and nothing was stored: NOTHING_FETCHED (docs/errors.md), yet the errs records are there.
    assert.equal(r.code, 5, r.stderr);
    for (const [data, pages, errors] of [
      [empty, 0, 0],
      [errorsOnly, 0, 2],
    ] as const) {
      const file = join(tmp.path, `${data.split('/').pop()}.html`);
      const json = await report(data, file);
      assert.equal(json.totals.pages, pages);
      assert.equal(json.totals.errors, errors);
      if (skip) continue;
      const { page, problems, shown } = await open(browser!, file);
      assert.deepEqual(problems, [], data);
      assert.equal(shown.nums.pages?.value, pages);
      await page.close();
    }
    if (skip) t.skip(skip);
  });

  test('bad input: one clear line and an exit code, no stack trace', async () => {
    const missing = await runCli(['report', '--data', join(tmp.path, 'no-such-dir')]);
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /^mountcrawl: NO_DATA_DIR: /);
    const seeded = await runCli(['seed', site.url(0, '/'), '--data', join(tmp.path, 'seeded')]);
    assert.equal(seeded.code, 0, seeded.stderr);
    const unwritable = await runCli(['report', '--data', join(tmp.path, 'seeded'), '--out', join(tmp.path, 'no-dir', 'r.html')]);
    assert.equal(unwritable.code, 2);
    assert.match(unwritable.stderr, /^mountcrawl: REPORT_NOT_WRITTEN: cannot write .*r\.html: /);
    assert.doesNotMatch(unwritable.stderr, /\n\s+at /);
  });

  test('a data directory being written by a running crawl gives a report', async (t) => {
    const data = join(tmp.path, 'live');
    const child = spawnCli(['crawl', ...gen.hosts.map((h) => `${h.origin}/`), '--data', data, '--per-host', '1', ...FAST, '--delay', '20']);
    const end = Date.now() + 60_000;
    while ((await listFiles(data)).filter((f) => f.startsWith('links/')).length < 20 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const file = join(tmp.path, 'live.html');
    const json = await report(data, file);
    assert.ok(json.totals.pages >= 20, `${json.totals.pages} pages`);
    assert.ok(json.nodes.length >= 1, 'the running node is listed');
    child.kill('SIGINT');
    await child.done;
    if (skip) return t.skip(skip);
    const { page, problems } = await open(browser!, file);
    assert.deepEqual(problems, []);
    await page.close();
  });
});
