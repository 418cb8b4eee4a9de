import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemClock } from '../../../src/config/clock.js';
import { SUMMARY_EVERY_MS, SUMMARY_EVERY_PAGES, SUMMARY_GROWTH, SummaryWriter } from '../../../src/crawl/summary-writer.js';
import { silentLogger } from '../../../src/progress/logger.js';
import { writeFileAtomic } from '../../../src/store/atomic-write.js';
import { readHostSummary } from '../../../src/store/host-summary.js';
import { Layout } from '../../../src/store/layout.js';
import { Mount } from '../../../src/store/mount.js';
import { serializeRecord } from '../../../src/store/records.js';
import { urlKey } from '../../../src/url/key.js';
import { pageRecord } from '../../support/links-records.js';
import { FakeClock } from '../../support/fake-clock.js';
import { MemoryFs } from '../../support/memory-fs.js';

const HOST = 'a.test';

async function setUp(clock = systemClock): Promise<{ fs: MemoryFs; layout: Layout; writer: SummaryWriter }> {
  const fs = new MemoryFs(() => Date.now());
  const layout = new Layout('/data', new Mount(fs, systemClock));
  await fs.mkdir(layout.hostDir('links', HOST), { recursive: true });
  const writer = new SummaryWriter({ layout, clock, log: silentLogger, nodeId: 'n1', fsync: false });
  return { fs, layout, writer };
}

/** Writes page i's links record, as the committer does, and tells the writer when given one. */
async function commit(layout: Layout, i: number, writer?: SummaryWriter): Promise<void> {
  const url = `http://${HOST}/p${i}`;
  const record = pageRecord(url, { depth: 1, links: [`http://b.test/${i}`] });
  await writeFileAtomic(layout.mount, layout.links(HOST, urlKey(url)), serializeRecord(record), { nodeId: 'n1', fsync: false });
  writer?.pageWritten(HOST, urlKey(url), record);
}

describe('SummaryWriter', () => {
  test("a host let go to its next owner has its summary written: its pages from memory, a previous owner's from their records", async () => {
    const { fs, layout, writer } = await setUp();
    await commit(layout, 0); // a previous owner's page
    await commit(layout, 1, writer);
    await commit(layout, 2, writer);
    const readsBefore = fs.calls.get('readFile') ?? 0;
    await writer.forget(HOST, true);
    const reads = (fs.calls.get('readFile') ?? 0) - readsBefore;
    const s = await readHostSummary(layout, HOST);
    assert.equal(s?.pages.size, 3);
    assert.ok(s?.links.has('http://b.test/0'));
    // The summary (absent) and the previous owner's record were read; this node's pages were not.
    assert.equal(reads, 2);
  });

  test('a host whose lease was lost has nothing written for it', async () => {
    const { layout, writer } = await setUp();
    await commit(layout, 0, writer);
    await writer.forget(HOST, false);
    assert.equal(await readHostSummary(layout, HOST), undefined);
    await writer.flushAll();
    assert.equal(await readHostSummary(layout, HOST), undefined);
  });

  test(`every ${SUMMARY_EVERY_PAGES} pages the summary is written while the host is crawled`, async () => {
    const { layout, writer } = await setUp();
    for (let i = 0; i < SUMMARY_EVERY_PAGES; i++) await commit(layout, i, writer);
    await writer.forget(HOST, false); // awaits the write under way, writes nothing more
    assert.equal((await readHostSummary(layout, HOST))?.pages.size, SUMMARY_EVERY_PAGES);
  });

  test(`${SUMMARY_EVERY_MS / 1000} s after the last write, the summary is written again once the new pages are ${SUMMARY_GROWTH * 100}% of what it covers`, async () => {
    const clock = new FakeClock();
    const { fs, layout, writer } = await setUp(clock);
    const covered = 200;
    writer.taken(HOST, covered);
    const writes = (): number => fs.calls.get('rename') ?? 0;
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    clock.advance(SUMMARY_EVERY_MS);
    const due = Math.ceil(SUMMARY_GROWTH * covered);
    let i = 0;
    for (; i < due - 1; i++) await commit(layout, i, writer);
    await settle();
    const before = writes();
    assert.equal((await readHostSummary(layout, HOST))?.pages.size, undefined, `${due - 1} new pages of ${covered}: not yet`);
    await commit(layout, i++, writer);
    await settle();
    assert.ok(writes() > before, 'written');
    assert.equal((await readHostSummary(layout, HOST))?.pages.size, due);
    // Now it covers `due` pages (this test's records): after the next minute, one new page is enough.
    clock.advance(SUMMARY_EVERY_MS);
    await commit(layout, i++, writer);
    await settle();
    assert.equal((await readHostSummary(layout, HOST))?.pages.size, due + 1);
  });
});
