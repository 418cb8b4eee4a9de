import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { exportCommand, type ExportOptions } from '../../../src/cli/export-command.js';
import { EXPORT_FIELDS, parseFields } from '../../../src/cli/export-fields.js';
import { FatalError } from '../../../src/errors.js';
import { openDataDir } from '../../../src/store/data-dir.js';
import { currentHostSummary, writeHostSummary } from '../../../src/store/host-summary.js';
import type { Layout } from '../../../src/store/layout.js';
import { serializeRecord } from '../../../src/store/records.js';
import { urlKey } from '../../../src/url/key.js';
import { NORMALIZATION_VERSION } from '../../../src/url/normalize.js';
import { pageRecord } from '../../support/links-records.js';
import { freshDirs } from '../../support/temp-paths.js';

const dirs = freshDirs('mountcrawl-export-');
const HOSTS = ['a.test', 'b.test', 'c.test'];

async function writePage(layout: Layout, host: string, i: number, linksEach: number): Promise<string> {
  const url = `http://${host}/p${i}`;
  const links = Array.from({ length: linksEach }, (_, k) => `http://${host}/p${i + k + 1}`);
  const record = pageRecord(url, { depth: i % 5, status: 200 + (i % 3), links });
  await writeFile(layout.links(host, urlKey(url)), serializeRecord(record));
  return urlKey(url);
}

/** A data directory of `pages` pages per host, with each host's summary written after the first `summarized`. */
async function crawl(pages: number, summarized: number, linksEach = 1): Promise<{ dir: string; layout: Layout }> {
  const dir = await dirs();
  const { layout } = await openDataDir(dir, 'n1', { version: NORMALIZATION_VERSION, sessionParams: [] });
  for (const host of HOSTS) {
    await mkdir(layout.hostDir('links', host), { recursive: true });
    for (let i = 0; i < summarized; i++) await writePage(layout, host, i, linksEach);
    const { summary } = await currentHostSummary(layout, host);
    await writeHostSummary(layout, host, summary, { nodeId: 'n1', fsync: false, nowMs: 0 });
    for (let i = summarized; i < pages; i++) await writePage(layout, host, i, linksEach);
  }
  return { dir, layout };
}

async function lines(dir: string, options: Partial<ExportOptions> = {}, onLine?: (n: number) => Promise<void>): Promise<string[]> {
  const out: string[] = [];
  const code = await exportCommand(dir, { errors: false, hosts: [], ...options }, async (chunk) => {
    const text = chunk.toString('utf8');
    assert.ok(text.endsWith('\n'), 'a chunk is whole lines');
    out.push(...text.slice(0, -1).split('\n'));
    await onLine?.(out.length);
  });
  assert.equal(code, 0);
  return out;
}

describe('export', () => {
  test('every record, host by host in key order, whole (as the record file holds it)', async () => {
    const { dir } = await crawl(150, 100);
    const out = await lines(dir);
    assert.equal(out.length, 450);
    const keys = out.map((l) => [new URL((JSON.parse(l) as { url: string }).url).host, urlKey((JSON.parse(l) as { url: string }).url)]);
    const sorted = [...keys].sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : a[1]! < b[1]! ? -1 : 1));
    assert.deepEqual(keys, sorted);
    const first = JSON.parse(out[0]!) as Record<string, unknown>;
    assert.deepEqual(Object.keys(first), Object.keys(pageRecord('http://x/', { links: [] })));
  });

  test('--fields: only those fields, in the order asked; key is the file name', async () => {
    const { dir } = await crawl(20, 10);
    const out = await lines(dir, { fields: ['status', 'key', 'url'], hosts: ['b.test'] });
    assert.equal(out.length, 20);
    for (const l of out) {
      const row = JSON.parse(l) as { status: number; key: string; url: string };
      assert.deepEqual(Object.keys(row), ['status', 'key', 'url']);
      assert.equal(row.key, urlKey(row.url));
    }
  });

  test('--fields key,url,depth from host summaries plus the newer records equals the same from the records alone', async () => {
    const { dir, layout } = await crawl(130, 100);
    const fields = ['key', 'url', 'depth'];
    const withSummaries = await lines(dir, { fields });
    await rm(layout.summary('a.test'));
    await rm(layout.summary('b.test'));
    await rm(layout.summary('c.test'));
    const fromRecords = await lines(dir, { fields });
    assert.equal(withSummaries.length, 390);
    assert.deepEqual(withSummaries, fromRecords);
    assert.deepEqual(
      withSummaries
        .map((l) => JSON.parse(l) as { depth: number })
        .slice(0, 3)
        .map((r) => typeof r.depth),
      ['number', 'number', 'number'],
    );
  });

  test('the pages a summary covers are not read: a covered record made unreadable is still exported from it', async () => {
    const { dir, layout } = await crawl(30, 20);
    const covered = urlKey('http://b.test/p5');
    await writeFile(layout.links('b.test', covered), 'not json');
    const out = await lines(dir, { fields: ['key', 'depth'], hosts: ['b.test'] });
    assert.equal(out.length, 30);
    assert.ok(out.includes(JSON.stringify({ key: covered, depth: 0 })));
    // All the fields: every record is read, and the unreadable one is left out.
    assert.equal((await lines(dir, { hosts: ['b.test'] })).length, 29);
  });

  test('a summary naming a page whose record is gone is not used: the records are the truth', async () => {
    const { dir, layout } = await crawl(40, 40);
    const gone = urlKey('http://a.test/p7');
    await rm(layout.links('a.test', gone));
    const out = await lines(dir, { fields: ['key', 'url', 'depth'], hosts: ['a.test'] });
    assert.equal(out.length, 39);
    assert.ok(!out.some((l) => l.includes(gone)));
  });

  test('a torn record is left out, and so is one that vanishes while the export runs', async () => {
    // Lines of about 2 kB: the first lines are written long before the last records are read.
    const { dir, layout } = await crawl(1500, 0, 100);
    const keys = (await lines(dir, { fields: ['key'], hosts: ['a.test'] })).map((l) => (JSON.parse(l) as { key: string }).key);
    const torn = keys[3]!;
    await writeFile(layout.links('a.test', torn), '{"v": 1, "url": "http://a.test/p');
    // Far beyond the records read ahead of the first lines written (a few jobs of each thread).
    const vanishing = keys[1490]!;
    let removed = false;
    const out = await lines(dir, { hosts: ['a.test'] }, async () => {
      if (!removed) await rm(layout.links('a.test', vanishing));
      removed = true;
    });
    const urls = out.map((l) => urlKey((JSON.parse(l) as { url: string }).url));
    assert.equal(out.length, 1498);
    assert.ok(!urls.includes(torn) && !urls.includes(vanishing));
    assert.deepEqual(
      urls,
      keys.filter((k) => k !== torn && k !== vanishing),
    );
  });
});

test('parseFields: names in the order given, each once; an unknown name is one line of usage listing the valid ones', () => {
  assert.deepEqual(parseFields('url,key,url, depth'), ['url', 'key', 'depth']);
  for (const bad of ['url,nope', '', 'url,,depth']) {
    assert.throws(
      () => parseFields(bad),
      (err: unknown) =>
        err instanceof FatalError &&
        err.exitCode === 2 &&
        !err.message.includes('\n') &&
        err.message.endsWith(`valid fields: ${EXPORT_FIELDS.join(', ')}`),
    );
  }
  assert.throws(() => parseFields('url,nope'), /unknown field "nope"/);
});
