import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { before, describe, test } from 'node:test';
import { collectReport, type ReportData } from '../../../src/report/report-data.js';
import { renderReport } from '../../../src/report/report-html.js';
import { openDataDir } from '../../../src/store/data-dir.js';
import type { Layout } from '../../../src/store/layout.js';
import { RECORD_VERSION, type ErrsRecord, type LinksRecord } from '../../../src/store/records.js';
import { urlKey } from '../../../src/url/key.js';
import { warcinfoRecord } from '../../../src/warc/warc-records.js';
import { pageRecord } from '../../support/links-records.js';
import { remoteRecord, writeRecord } from '../../support/node-records.js';
import { freshPaths } from '../../support/temp-paths.js';

const HOST = '127.0.0.9_80';
const freshPath = freshPaths('mountcrawl-report-');

async function put(path: string, value: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, JSON.stringify(value));
}

function page(layout: Layout, path: string, extra: Partial<LinksRecord>): Promise<void> {
  const url = `http://127.0.0.9/${path}`;
  return put(layout.links(HOST, urlKey(url)), pageRecord(url, extra));
}

function errs(layout: Layout, path: string, code: string, status?: number): Promise<void> {
  const url = `http://127.0.0.9/${path}`;
  const r: ErrsRecord = {
    v: RECORD_VERSION,
    url,
    code,
    message: `${code} for ${url}`,
    final: true,
    attempts: 1,
    firstAt: '2026-01-01T00:00:09.000Z',
    lastAt: '2026-01-01T00:00:09.000Z',
    nextAttemptAt: null,
    depth: 1,
    node: 'gone',
    ...(status !== undefined ? { status } : {}),
  };
  return put(layout.errs(HOST, urlKey(url)), r);
}

/**
 * A crawl by two nodes: `live` still heartbeating on box-b, `gone` exited (no record) after
 * writing two WARC files on box-a; a 301 among 200s, a 404, a timeout, a URL robots.txt
 * excludes, and twelve more WARC files of a third node.
 */
async function twoNodeCrawl(): Promise<{ dir: string; layout: Layout }> {
  const dir = freshPath();
  const { layout } = await openDataDir(dir, 'report-test');
  await page(layout, 'a', { node: 'gone', fetchedAt: '2026-01-01T00:00:00.250Z', links: ['http://127.0.0.9/b', 'http://127.0.0.9/c'] });
  await page(layout, 'b', { node: 'gone', fetchedAt: '2026-01-01T00:00:05.500Z', status: 301 });
  await page(layout, 'c', { node: 'live', fetchedAt: '2026-01-01T00:00:03.000Z' });
  await errs(layout, 'gone', 'HTTP_404', 404);
  await errs(layout, 'slow', 'FETCH_TIMEOUT');
  await errs(layout, 'private', 'ROBOTS_DISALLOWED');
  await writeRecord(layout, remoteRecord('live', 7, { hostname: 'box-b', updatedAt: '2026-01-01T00:00:08.000Z', rate: 2.5 }));
  await mkdir(layout.warc(), { recursive: true });
  for (const seq of [0, 1]) {
    const name = `20260101000000000-gone-0000${seq}.warc.gz`;
    const info = await warcinfoRecord(name, { hostname: 'box-a', 'mountcrawl-node': 'gone' }, Date.UTC(2026, 0, 1));
    await writeFile(join(layout.warc(), name), info.bytes);
  }
  for (let seq = 0; seq < 12; seq++) {
    await writeFile(join(layout.warc(), `20260101000001000-third-${String(seq).padStart(5, '0')}.warc.gz`), Buffer.alloc(100 + seq));
  }
  return { dir, layout };
}

describe('collectReport', () => {
  let r: ReportData;
  before(async () => {
    r = await collectReport((await twoNodeCrawl()).dir, Date.UTC(2026, 0, 1, 0, 1));
  });

  test('errors are the failures; URLs robots.txt excludes are counted apart, and are no status', () => {
    assert.equal(r.totals.errors, 2);
    assert.equal(r.totals.errorsFinal, 2);
    assert.equal(r.totals.robotsDisallowed, 1);
    assert.deepEqual(
      r.hosts.map((h) => [h.host, h.pages, h.errors, h.robotsDisallowed]),
      [[HOST, 3, 2, 1]],
    );
    assert.deepEqual(r.status, { '200': 2, '301': 1, '404': 1, none: 1 });
    assert.equal(
      r.timeline.errors.reduce((a, b) => a + b, 0),
      2,
    );
  });

  test('the first fetch to the millisecond, not the start of its timeline bucket', () => {
    assert.equal(r.firstFetchAt, '2026-01-01T00:00:00.250Z');
  });

  test('a node that exited: its machine from its WARC files, its last page for its last heartbeat, no rate', () => {
    const gone = r.nodes.find((n) => n.id === 'gone');
    assert.deepEqual(gone, {
      id: 'gone',
      state: 'exited',
      hostname: 'box-a',
      rate: null,
      pages: 2,
      lastSeen: '2026-01-01T00:00:05.500Z',
      lastSeenFrom: 'last page',
      alive: null,
    });
    const live = r.nodes.find((n) => n.id === 'live');
    assert.deepEqual(
      [live?.state, live?.hostname, live?.rate, live?.pages, live?.lastSeen, live?.lastSeenFrom],
      ['crawling', 'box-b', 2.5, 1, '2026-01-01T00:00:08.000Z', 'heartbeat'],
    );
  });

  test('the WARC files by name, with their sizes; the totals sum them', () => {
    assert.equal(r.warc.length, 14);
    assert.deepEqual(
      r.warc.map((f) => f.name),
      [...r.warc.map((f) => f.name)].sort(),
    );
    const third = r.warc.find((f) => f.name === '20260101000001000-third-00003.warc.gz');
    assert.deepEqual(third, { name: '20260101000001000-third-00003.warc.gz', bytes: 103, open: false });
    assert.equal(r.totals.warcFiles, 14);
    assert.equal(
      r.totals.warcBytes,
      r.warc.reduce((n, f) => n + f.bytes, 0),
    );
  });
});

describe('renderReport', () => {
  let html: string;
  before(async () => {
    html = renderReport(await collectReport((await twoNodeCrawl()).dir));
  });

  test('every column of numbers has its header aligned as its numbers are', () => {
    for (const table of html.match(/<table[\s\S]*?<\/table>/g) ?? []) {
      const heads = [...(table.match(/<thead>[\s\S]*?<\/thead>/)?.[0] ?? '').matchAll(/<th(\s[^>]*)?>/g)].map((m) =>
        /class="r"/.test(m[1] ?? ''),
      );
      for (const row of table.match(/<tr>(?:(?!<\/tr>)[\s\S])*<td[\s\S]*?<\/tr>/g) ?? []) {
        const cells = [...row.matchAll(/<td(\s[^>]*)?>/g)].map((m) => /class="r"/.test(m[1] ?? ''));
        assert.deepEqual(cells, heads, `${table.slice(0, 40)}: ${row.slice(0, 80)}`);
      }
    }
  });

  test('an exited node shows a dash for its rate and says where its last time comes from', () => {
    const row = html.match(/<tr><td>gone<\/td>[\s\S]*?<\/tr>/)?.[0] ?? '';
    assert.match(row, /<td>exited<\/td>/);
    assert.match(row, /<td class="r"><span class="note">—<\/span><\/td><td>box-a<\/td>/);
    assert.match(row, /2026-01-01T00:00:05\.500Z <span class="note">\(last page\)<\/span>/);
  });

  test('the WARC files are listed with their sizes, those past ten folded away', () => {
    assert.match(html, /<code>20260101000000000-gone-00000\.warc\.gz<\/code>/);
    assert.match(html, /<details><summary>4 more files<\/summary>/);
    assert.match(html, /<code>20260101000001000-third-00011\.warc\.gz<\/code><\/td><td class="r" data-v="111">111 B<\/td>/);
  });

  test('the first fetch as it was, to the millisecond', () => {
    assert.match(html, / · first fetch 2026-01-01T00:00:00\.250Z</);
  });
});
