import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { loadSchedule, writeSchedule } from '../../../src/recrawl/schedule-file.js';
import { DIRS, Layout, SCHEDULE_DIR } from '../../../src/store/layout.js';
import { serializeRecord, type LinksRecord } from '../../../src/store/records.js';
import { urlKey } from '../../../src/url/key.js';
import { tempDir } from '../../support/cli.js';
import { pageRecord } from '../../support/links-records.js';

const HOST = '127.0.0.2';

function rec(path: string, fetchedAt: number, nextFetchAt?: number): LinksRecord {
  return pageRecord(`http://${HOST}${path}`, {
    bytes: 1,
    fetchedAt: new Date(fetchedAt).toISOString(),
    depth: 2,
    node: 'n',
    durationMs: 1,
    ...(nextFetchAt !== undefined ? { nextFetchAt: new Date(nextFetchAt).toISOString() } : {}),
  });
}

describe('the per-host recrawl schedule (docs/recrawl.md, "Storage")', () => {
  let data: { path: string; cleanup: () => Promise<void> };
  let layout: Layout;
  const keys = new Set<string>();
  const T = Date.UTC(2026, 0, 5);

  before(async () => {
    data = await tempDir();
    layout = new Layout(data.path);
    for (const d of Object.values(DIRS)) await mkdir(`${data.path}/${d}`);
    await mkdir(layout.hostDir('links', HOST));
    for (let i = 0; i < 10; i++) {
      const r = rec(`/p/${i}`, T + i, i === 9 ? T + 5_000 : undefined);
      keys.add(urlKey(r.url));
      await writeFile(layout.links(HOST, urlKey(r.url)), serializeRecord(r));
    }
  });
  after(() => data.cleanup());

  test('missing: rebuilt from every links record (nextFetchAt, else fetch time plus --recrawl-after)', async () => {
    const { schedule, recordsRead } = await loadSchedule(layout, HOST, keys, 1_000);
    assert.equal(recordsRead, 10);
    assert.equal(schedule.size, 10);
    assert.equal(schedule.get(urlKey(`http://${HOST}/p/3`))!.dueMs, T + 3 + 1_000);
    assert.equal(schedule.get(urlKey(`http://${HOST}/p/9`))!.dueMs, T + 5_000);
    assert.equal(schedule.get(urlKey(`http://${HOST}/p/9`))!.depth, 2);
  });

  test('current: read whole, no record read; written whole (no temp file left)', async () => {
    const { schedule } = await loadSchedule(layout, HOST, keys, 1_000);
    await writeSchedule(layout, HOST, schedule, { nodeId: 'n', fsync: false, nowMs: T });
    const again = await loadSchedule(layout, HOST, keys, 99_999);
    assert.equal(again.recordsRead, 0);
    assert.deepEqual([...again.schedule].sort(), [...schedule].sort());
    assert.deepEqual(await readdir(`${data.path}/${SCHEDULE_DIR}`), [`${HOST}.json`]);
  });

  test('stale: records written after the file are read, keys without a record are dropped', async () => {
    const r = rec('/new', T);
    await writeFile(layout.links(HOST, urlKey(r.url)), serializeRecord(r));
    const listing = new Set([...keys].slice(1));
    listing.add(urlKey(r.url));
    const { schedule, recordsRead } = await loadSchedule(layout, HOST, listing, 1_000);
    assert.equal(recordsRead, 1);
    assert.equal(schedule.size, 10);
    assert.ok(!schedule.has([...keys][0]!));
    assert.equal(schedule.get(urlKey(r.url))!.dueMs, T + 1_000);
  });

  test('unreadable: rebuilt, not fatal', async () => {
    await writeFile(layout.schedule(HOST), '{"v":1,"entries":');
    const { schedule, recordsRead } = await loadSchedule(layout, HOST, keys, 1_000);
    assert.equal(recordsRead, 10);
    assert.equal(schedule.size, 10);
  });
});
