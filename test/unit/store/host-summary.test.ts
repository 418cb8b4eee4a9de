import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemClock } from '../../../src/config/clock.js';
import type { OfferResult } from '../../../src/frontier/admission/admission.js';
import type { ReseedSink } from '../../../src/reseed/reseed-sink.js';
import { Reseeder } from '../../../src/reseed/reseeder.js';
import { writeFileAtomic } from '../../../src/store/atomic-write.js';
import { addRecord, currentHostSummary, emptySummary, readHostSummary, writeHostSummary } from '../../../src/store/host-summary.js';
import { Layout, SUMMARY_DIR } from '../../../src/store/layout.js';
import { tempName } from '../../../src/store/temp-names.js';
import { Mount } from '../../../src/store/mount.js';
import { serializeRecord } from '../../../src/store/records.js';
import { urlKey } from '../../../src/url/key.js';
import { FakeClock } from '../../support/fake-clock.js';
import { pageRecord } from '../../support/links-records.js';
import { MemoryFs } from '../../support/memory-fs.js';

const ROOT = '/data';
const HOST = 'a.test';
const NODE = 'n1';
const OPTIONS = { nodeId: NODE, fsync: false, nowMs: 0 };

/** A data directory on a MemoryFs with `pages` links records of a.test, each linking to the next page and to b.test. */
async function crawled(pages: number): Promise<{ fs: MemoryFs; layout: Layout }> {
  // The real clock: a torn read is read again after a short pause on the mount's clock.
  const fs = new MemoryFs(() => Date.now());
  const layout = new Layout(ROOT, new Mount(fs, systemClock));
  await fs.mkdir(layout.hostDir('links', HOST), { recursive: true });
  for (let i = 0; i < pages; i++) await writePage(layout, i);
  return { fs, layout };
}

function pageUrl(i: number): string {
  return `http://${HOST}/p${i}`;
}

async function writePage(layout: Layout, i: number): Promise<void> {
  const url = pageUrl(i);
  const record = pageRecord(url, { depth: i, links: [pageUrl(i + 1), `http://b.test/from${i}`, 'http://b.test/all'] });
  await writeFileAtomic(layout.mount, layout.links(HOST, urlKey(url)), serializeRecord(record), { nodeId: NODE, fsync: false });
}

/** What a reseed offers: "url depth referrer", sorted. */
async function offersOfFullReseed(
  layout: Layout,
  summaries: boolean,
): Promise<{ offers: string[]; recordsRead: number; summariesRead: number }> {
  const offers: string[] = [];
  const sink: ReseedSink = {
    wantsHost: () => true,
    prepareHosts: async () => undefined,
    addSeed: () => undefined,
    offer: (url, _hostDir, depth, referrer): OfferResult => {
      offers.push(`${url} ${depth} ${referrer?.url}`);
      return 'queued';
    },
  };
  const reseeder = new Reseeder(layout, { clock: new FakeClock(), serverTime: () => undefined, summaries });
  const stats = await reseeder.reseed(sink, true);
  return { offers: offers.sort(), recordsRead: stats.recordsRead, summariesRead: stats.summariesRead };
}

/** Of offers "url depth referrer", the one of lowest depth for each URL, sorted. */
function shallowest(offers: readonly string[]): string[] {
  const best = new Map<string, string>();
  for (const o of offers) {
    const [url, depth] = o.split(' ');
    const was = best.get(url!);
    if (was === undefined || Number(was.split(' ')[1]) > Number(depth)) best.set(url!, o);
  }
  return [...best.values()].sort();
}

describe('host summaries', () => {
  test('a summary written and read back covers every record: bringing it up to date reads none', async () => {
    const { layout } = await crawled(5);
    const built = await currentHostSummary(layout, HOST);
    assert.equal(built.recordsRead, 5);
    assert.equal(built.changed, true);
    await writeHostSummary(layout, HOST, built.summary, OPTIONS);
    const read = await readHostSummary(layout, HOST);
    assert.deepEqual(read, built.summary);
    // The shallowest page naming a link is its referrer.
    assert.equal(read?.pages.get(read.links.get('http://b.test/all')!)?.url, pageUrl(0));
    const again = await currentHostSummary(layout, HOST);
    assert.equal(again.recordsRead, 0);
    assert.equal(again.changed, false);
  });

  test('a record newer than the summary is read, and only it', async () => {
    const { layout } = await crawled(4);
    await writeHostSummary(layout, HOST, (await currentHostSummary(layout, HOST)).summary, OPTIONS);
    await writePage(layout, 4);
    const now = await currentHostSummary(layout, HOST);
    assert.equal(now.recordsRead, 1);
    assert.equal(now.changed, true);
    assert.equal(now.summary.pages.size, 5);
  });

  test('a summary naming a page the listing lacks is ignored: rebuilt from the records', async () => {
    const { fs, layout } = await crawled(3);
    await writeHostSummary(layout, HOST, (await currentHostSummary(layout, HOST)).summary, OPTIONS);
    await fs.unlink(layout.links(HOST, urlKey(pageUrl(1))));
    const now = await currentHostSummary(layout, HOST);
    assert.equal(now.recordsRead, 2);
    assert.deepEqual([...now.summary.pages.values()].map((p) => p.url).sort(), [pageUrl(0), pageUrl(2)]);
  });

  test('a torn or foreign summary is ignored, and a kill while writing leaves a temp file that readers never read', async () => {
    const { fs, layout } = await crawled(3);
    await fs.mkdir(`${ROOT}/${SUMMARY_DIR}`);
    // A writer killed before its rename: only its temp file is there, half written.
    const full = JSON.stringify({ v: 1, host: HOST, writtenAt: '', pages: [], links: [] });
    await fs.writeNew(`${ROOT}/${SUMMARY_DIR}/${tempName(`${HOST}.json`, NODE, 'abc123', 1)}`, full.slice(0, 20));
    assert.equal(await readHostSummary(layout, HOST), undefined);
    assert.equal((await currentHostSummary(layout, HOST)).recordsRead, 3);
    for (const bad of [
      full.slice(0, 30),
      '{"v":1}',
      full.replace(HOST, 'other.test'),
      '{"v":1,"host":"a.test","pages":[["x","u",0]],"links":[]}',
    ]) {
      await writeFileAtomic(layout.mount, layout.summary(HOST), bad, { nodeId: NODE, fsync: false });
      assert.equal(await readHostSummary(layout, HOST), undefined, bad);
      assert.equal((await currentHostSummary(layout, HOST)).recordsRead, 3, bad);
    }
  });

  test('a full reseed with a current summary reads no record and offers what the records would', async () => {
    const { fs, layout } = await crawled(40);
    const fromRecords = await offersOfFullReseed(layout, true);
    assert.equal(fromRecords.recordsRead, 40);
    assert.equal(fromRecords.summariesRead, 0);
    await writeHostSummary(layout, HOST, (await currentHostSummary(layout, HOST)).summary, OPTIONS);
    const before = fs.calls.get('readFile') ?? 0;
    const fromSummary = await offersOfFullReseed(layout, true);
    assert.equal(fromSummary.recordsRead, 0);
    assert.equal(fromSummary.summariesRead, 1);
    assert.equal((fs.calls.get('readFile') ?? 0) - before, 1, 'one file read: the summary');
    // Each URL at its shallowest depth, from the page naming it there (a record scan may offer
    // a URL again when it meets it at a lower depth; a summary keeps only the lowest).
    assert.deepEqual(fromSummary.offers, shallowest(fromRecords.offers));
    // A page written since: its record is read, the rest come from the summary.
    await writePage(layout, 40);
    const newer = await offersOfFullReseed(layout, true);
    assert.equal(newer.recordsRead, 1);
    assert.ok(newer.offers.includes(`http://b.test/from40 41 ${pageUrl(40)}`));
    // Without summaries (--recrawl-after), every record is read.
    assert.equal((await offersOfFullReseed(layout, false)).recordsRead, 41);
  });

  test("a full reseed scans a host's summary once its take settles, the other hosts meanwhile; a link that crosses hosts is offered once", async () => {
    const fs = new MemoryFs(() => Date.now());
    const layout = new Layout(ROOT, new Mount(fs, systemClock));
    // Two hosts, each page linking to the next of its host and to one page of c.test.
    for (const host of ['a.test', 'b.test']) {
      await fs.mkdir(layout.hostDir('links', host), { recursive: true });
      const summary = emptySummary();
      for (let i = 0; i < 3; i++) {
        const url = `http://${host}/p${i}`;
        const record = pageRecord(url, { depth: i, links: [`http://${host}/p${i + 1}`, 'http://c.test/shared'] });
        await writeFileAtomic(layout.mount, layout.links(host, urlKey(url)), serializeRecord(record), { nodeId: NODE, fsync: false });
        addRecord(summary, urlKey(url), record);
      }
      await writeHostSummary(layout, host, summary, OPTIONS);
    }
    const offers: string[] = [];
    let takeA!: () => void;
    const aTaken = new Promise<void>((resolve) => (takeA = resolve));
    const sink: ReseedSink = {
      wantsHost: () => true,
      prepareHosts: async () => undefined,
      hostLoaded: (hostDir) => (hostDir === 'a.test' ? aTaken : Promise.resolve()),
      addSeed: () => undefined,
      offer: (url): OfferResult => {
        offers.push(url);
        return 'queued';
      },
    };
    const reseeder = new Reseeder(layout, { clock: new FakeClock(), serverTime: () => undefined });
    const done = reseeder.reseed(sink, true);
    for (let i = 0; i < 100 && !offers.includes('http://b.test/p3'); i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(offers.sort(), ['http://b.test/p1', 'http://b.test/p2', 'http://b.test/p3', 'http://c.test/shared']);
    takeA();
    const stats = await done;
    assert.equal(stats.summariesRead, 2);
    assert.equal(stats.recordsRead, 0);
    assert.deepEqual(offers.sort(), [
      'http://a.test/p1',
      'http://a.test/p2',
      'http://a.test/p3',
      'http://b.test/p1',
      'http://b.test/p2',
      'http://b.test/p3',
      'http://c.test/shared',
    ]);
  });
});
