import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DirHandles } from '../../../src/store/dir-handles.js';
import { HostStore } from '../../../src/store/host-store.js';
import { addRecord, emptySummary, writeHostSummary } from '../../../src/store/host-summary.js';
import { DIRS, Layout } from '../../../src/store/layout.js';
import { RECORD_VERSION, serializeRecord, type ErrsRecord, type LinksRecord } from '../../../src/store/records.js';
import { urlKey } from '../../../src/url/key.js';
import { WriteThread } from '../../../src/store/write-thread.js';
import { hookFs } from '../../support/fs-hook.js';
import { pageRecord } from '../../support/links-records.js';

const NODE = 'ws1-100';
const HOST = 'example.org';
const url = (path: string): string => `http://${HOST}${path}`;
const K1 = urlKey(url('/one'));
const K2 = urlKey(url('/two'));
const K3 = urlKey(url('/three'));

let root: string;
let counter = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mountcrawl-hoststore-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A data directory with its top-level directories, as openDataDir leaves it. */
async function freshStore(): Promise<{ layout: Layout; store: HostStore }> {
  const layout = new Layout(join(root, `t${counter++}`));
  for (const d of Object.values(DIRS)) await mkdir(join(layout.root, d), { recursive: true });
  return { layout, store: new HostStore(layout, { nodeId: NODE, fsync: false }) };
}

function linksRecord(path: string, extra: Partial<LinksRecord> = {}): LinksRecord {
  return pageRecord(url(path), { node: NODE, links: [url('/a'), url('/b')], ...extra });
}

function errsRecord(path: string, extra: Partial<ErrsRecord> = {}): ErrsRecord {
  return {
    v: RECORD_VERSION,
    url: url(path),
    code: 'HTTP_503',
    message: 'HTTP 503',
    status: 503,
    final: false,
    attempts: 1,
    firstAt: '2025-01-15T12:00:00.000Z',
    lastAt: '2025-01-15T12:00:00.000Z',
    nextAttemptAt: '2025-01-15T12:01:00.000Z',
    depth: 2,
    node: NODE,
    ...extra,
  };
}

describe('HostStore: writes', () => {
  test('writePage writes the html file, then the links record; the contents are exact', async () => {
    const { layout, store } = await freshStore();
    const renamed: string[] = [];
    type Rename = (from: string, to: string, cb: (err: Error | null) => void) => void;
    const restore = hookFs<Rename>('rename', (original) => (from, to, cb) => {
      original(from, to, (err) => {
        if (!err) renamed.push(String(to));
        cb(err);
      });
    });
    const body = Buffer.from('<html><a href="/a">a</a></html>\u0000\xff', 'latin1');
    const record = linksRecord('/one', { html: layout.relativeHtml(HOST, K1) });
    try {
      await store.writePage(HOST, K1, body, record);
    } finally {
      restore();
    }
    assert.deepEqual(renamed, [layout.html(HOST, K1), layout.links(HOST, K1)], 'html first, links record last');
    assert.deepEqual(await readFile(layout.html(HOST, K1)), body);
    assert.equal(await readFile(layout.links(HOST, K1), 'utf8'), serializeRecord(record));
    assert.deepEqual(await readdir(layout.hostDir('html', HOST)), [`${K1}.html`]);
    assert.deepEqual(await readdir(layout.hostDir('links', HOST)), [`${K1}.json`]);
  });

  test('a page whose html write fails gets no links record', async () => {
    const { layout, store } = await freshStore();
    await writeFile(layout.hostDir('html', HOST), 'a file where the host directory should be');
    await assert.rejects(store.writePage(HOST, K1, Buffer.from('<html>'), linksRecord('/one')));
    assert.deepEqual(await readdir(layout.dir('links')), [], 'not even the links/<host> directory');
  });

  test('writePage with no body writes only the links record', async () => {
    const { layout, store } = await freshStore();
    await store.writePage(HOST, K1, null, linksRecord('/one'));
    assert.deepEqual(await readdir(layout.dir('html')), []);
    assert.deepEqual(await readdir(layout.hostDir('links', HOST)), [`${K1}.json`]);
  });

  test('writeErrs writes (and replaces) the errs record', async () => {
    const { layout, store } = await freshStore();
    await store.writeErrs(HOST, K1, errsRecord('/one'));
    const second = errsRecord('/one', { attempts: 2 });
    await store.writeErrs(HOST, K1, second);
    assert.equal(await readFile(layout.errs(HOST, K1), 'utf8'), serializeRecord(second));
    assert.deepEqual(await readdir(layout.hostDir('errs', HOST)), [`${K1}.json`]);
  });

  test('a host directory removed behind its back is made again on the next write', async () => {
    const { layout, store } = await freshStore();
    await store.writePage(HOST, K1, null, linksRecord('/one'));
    await rm(layout.hostDir('links', HOST), { recursive: true });
    await store.writePage(HOST, K2, null, linksRecord('/two'));
    assert.deepEqual(await readdir(layout.hostDir('links', HOST)), [`${K2}.json`]);
  });

  test('with open host directories (a network mount): the same files; a directory removed behind its back is made again', async () => {
    const { layout } = await freshStore();
    const dirs = new DirHandles();
    const store = new HostStore(layout, { nodeId: NODE, fsync: false, dirs });
    await store.writePage(HOST, K1, new TextEncoder().encode('<p>one</p>'), linksRecord('/one'));
    assert.equal(dirs.size, 2, 'html/<host> and links/<host> kept open');
    await rm(layout.hostDir('links', HOST), { recursive: true });
    // The open descriptor leads to the removed directory: the write fails there, the handle
    // is dropped, the directory made again and the write goes to the new one.
    await store.writePage(HOST, K2, null, linksRecord('/two'));
    assert.deepEqual(await readdir(layout.hostDir('links', HOST)), [`${K2}.json`]);
    assert.equal(await readFile(layout.html(HOST, K1), 'utf8'), '<p>one</p>');
    store.close();
    assert.equal(dirs.size, 0);
  });

  test('with a write thread (a local disk): the same files; a directory removed behind its back is made again', async () => {
    const { layout } = await freshStore();
    const thread = new WriteThread();
    const store = new HostStore(layout, { nodeId: NODE, fsync: false, thread });
    try {
      await store.writePage(HOST, K1, new TextEncoder().encode('<p>one</p>'), linksRecord('/one'));
      await rm(layout.hostDir('links', HOST), { recursive: true });
      // The thread's create fails with ENOENT, as the pool's would: the directory is made again.
      await store.writePage(HOST, K2, null, linksRecord('/two'));
      await store.writeErrs(HOST, K3, errsRecord('/three'));
      assert.deepEqual(await readdir(layout.hostDir('links', HOST)), [`${K2}.json`]);
      assert.equal(await readFile(layout.html(HOST, K1), 'utf8'), '<p>one</p>');
      assert.equal(await readFile(layout.links(HOST, K2), 'utf8'), serializeRecord(linksRecord('/two')));
      assert.equal(await readFile(layout.errs(HOST, K3), 'utf8'), serializeRecord(errsRecord('/three')));
      assert.equal(thread.usable, true);
    } finally {
      store.close();
    }
    assert.equal(thread.usable, false, 'closed with the store');
  });

  test("with a write thread, a host's later pages go in one message: a failed html file leaves no links record; a removed directory is made again", async () => {
    const { layout } = await freshStore();
    const thread = new WriteThread();
    const store = new HostStore(layout, { nodeId: NODE, fsync: false, thread });
    try {
      await store.writePage(HOST, K1, new TextEncoder().encode('<p>one</p>'), linksRecord('/one'));
      // Where the html file of K2 goes, a directory that is not empty: its rename fails.
      await mkdir(layout.html(HOST, K2));
      await writeFile(join(layout.html(HOST, K2), 'inside'), '');
      await assert.rejects(store.writePage(HOST, K2, new TextEncoder().encode('<p>two</p>'), linksRecord('/two')), { syscall: 'rename' });
      assert.deepEqual(await readdir(layout.hostDir('links', HOST)), [`${K1}.json`], 'no links record without its html file');
      // Both host directories removed behind the store's back: each made again.
      await rm(layout.hostDir('html', HOST), { recursive: true });
      await rm(layout.hostDir('links', HOST), { recursive: true });
      await store.writePage(HOST, K3, new TextEncoder().encode('<p>three</p>'), linksRecord('/three'));
      assert.equal(await readFile(layout.html(HOST, K3), 'utf8'), '<p>three</p>');
      assert.equal(await readFile(layout.links(HOST, K3), 'utf8'), serializeRecord(linksRecord('/three')));
      assert.deepEqual(await readdir(layout.hostDir('html', HOST)), [`${K3}.html`]);
    } finally {
      store.close();
    }
  });

  test('a vanished top-level directory is never recreated (the mount may be gone)', async () => {
    const { layout, store } = await freshStore();
    await store.writePage(HOST, K1, null, linksRecord('/one'));
    await rm(layout.dir('links'), { recursive: true });
    await assert.rejects(store.writePage(HOST, K2, null, linksRecord('/two')), { code: 'ENOENT' });
    assert.deepEqual((await readdir(layout.root)).includes('links'), false);
    // errs/ is still there: another kind of record of the host can be written.
    await store.writeErrs(HOST, K3, errsRecord('/three'));
    assert.deepEqual(await readdir(layout.hostDir('errs', HOST)), [`${K3}.json`]);
  });

  test('hasLinks: one stat; false when absent, true once written; other errors are thrown', async () => {
    const { layout, store } = await freshStore();
    assert.equal(await store.hasLinks(HOST, K1), false);
    await store.writePage(HOST, K1, null, linksRecord('/one'));
    assert.equal(await store.hasLinks(HOST, K1), true);
    assert.equal(await store.hasLinks(HOST, K2), false);
    await writeFile(layout.hostDir('links', 'file.example'), 'x');
    await assert.rejects(store.hasLinks('file.example', K1), { code: 'ENOTDIR' });
  });

  test('removeErrs removes the errs record; a missing one is fine', async () => {
    const { layout, store } = await freshStore();
    await store.writeErrs(HOST, K1, errsRecord('/one'));
    await store.writeErrs(HOST, K2, errsRecord('/two'));
    await store.removeErrs(HOST, K1);
    await store.removeErrs(HOST, K1);
    await store.removeErrs('never.example', K1);
    assert.deepEqual(await readdir(layout.hostDir('errs', HOST)), [`${K2}.json`]);
  });

  test('probe writes and removes a test file: nothing is left behind', async () => {
    const { layout, store } = await freshStore();
    await store.probe();
    await store.probe();
    assert.deepEqual(await readdir(layout.dir('nodes')), []);
    await rm(layout.dir('nodes'), { recursive: true });
    await assert.rejects(store.probe(), { code: 'ENOENT' });
  });
});

describe('HostStore.listHost', () => {
  test('a host with no directories is empty', async () => {
    const { store } = await freshStore();
    const asked: string[] = [];
    const listing = await store.listHost('never.example', (id) => (asked.push(id), true));
    assert.deepEqual([...listing.linksKeys], []);
    assert.deepEqual([...listing.errs], []);
    assert.equal(listing.removedTemps, 0);
    assert.deepEqual(asked, []);
  });

  test('returns the keys with links records and the errs records, ignoring junk names', async () => {
    const { layout, store } = await freshStore();
    await store.writePage(HOST, K1, Buffer.from('<html>'), linksRecord('/one'));
    await store.writePage(HOST, K2, null, linksRecord('/two'));
    const e3 = errsRecord('/three');
    await store.writeErrs(HOST, K3, e3);
    const links = layout.hostDir('links', HOST);
    const errs = layout.hostDir('errs', HOST);
    const junkKey = urlKey(url('/junk'));
    // Names that are not records.
    await writeFile(join(links, 'README'), 'x');
    await writeFile(join(links, 'notakey.json'), '{}');
    await writeFile(join(links, `${junkKey.toUpperCase()}.json`), '{}');
    await writeFile(join(links, `${junkKey}.json.bak`), '{}');
    await writeFile(join(links, `${junkKey}.html`), '{}');
    await writeFile(join(errs, 'notakey.json'), '{}');
    await writeFile(join(layout.hostDir('html', HOST), `${junkKey}.json`), '{}');
    // An errs record that does not parse and one that lacks fields: a URL that is not done.
    await writeFile(join(errs, `${urlKey(url('/broken'))}.json`), '{"url": "http://exa');
    await writeFile(join(errs, `${urlKey(url('/odd'))}.json`), '{"url": "http://example.org/odd"}');
    const listing = await store.listHost(HOST, () => true);
    assert.deepEqual([...listing.linksKeys].sort(), [K1, K2].sort());
    assert.deepEqual([...listing.errs.keys()], [K3]);
    assert.deepEqual(listing.errs.get(K3), e3);
    assert.equal(listing.removedTemps, 0);
  });

  test('withSummary: the pages of the host summary count as links records, also those the listing lacks (a listing that lags a hand-over)', async () => {
    const { layout, store } = await freshStore();
    await store.writePage(HOST, K1, null, linksRecord('/one'));
    const summary = emptySummary();
    addRecord(summary, K1, linksRecord('/one'));
    addRecord(summary, K2, linksRecord('/two'));
    await writeHostSummary(layout, HOST, summary, { nodeId: NODE, fsync: false, nowMs: 0 });
    assert.deepEqual([...(await store.listHost(HOST, () => true)).linksKeys], [K1], 'without: the listing only');
    assert.deepEqual([...(await store.listHost(HOST, () => true, true)).linksKeys].sort(), [K1, K2].sort());
    assert.deepEqual([...(await store.listHost('other.example', () => true, true)).linksKeys], [], 'no summary: the listing');
  });

  test('withSummary reads only the pages of the summary: its links may be torn or cut, its pages still count', async () => {
    const { layout, store } = await freshStore();
    await store.writePage(HOST, K1, null, linksRecord('/one'));
    const summary = emptySummary();
    addRecord(summary, K2, linksRecord('/two'));
    await writeHostSummary(layout, HOST, summary, { nodeId: NODE, fsync: false, nowMs: 0 });
    const text = await readFile(layout.summary(HOST), 'utf8');
    // Cut in the middle of its links: not a summary a reseed takes, but its pages are whole.
    await writeFile(layout.summary(HOST), text.slice(0, text.indexOf('"links":[') + 12));
    assert.deepEqual([...(await store.listHost(HOST, () => true, true)).linksKeys].sort(), [K1, K2].sort());
    // Cut in its pages: nothing of it counts.
    await writeFile(layout.summary(HOST), text.slice(0, text.indexOf('"pages":[') + 12));
    assert.deepEqual([...(await store.listHost(HOST, () => true, true)).linksKeys], [K1]);
  });

  test('removes temp files whose writer is gone and keeps the others', async () => {
    const { layout, store } = await freshStore();
    await store.writePage(HOST, K1, null, linksRecord('/one'));
    const temps = {
      html: [`.${K1}.html~gone-node~zz0001.tmp`, `.${K2}.html~live-node~zz0002.tmp`],
      links: [`.${K2}.json~gone-node~zz0003.tmp`, `.${K3}.json~live-node~zz0004.tmp`],
      errs: [`.${K3}.json~gone-node~zz0005.tmp`],
    } as const;
    for (const [kind, names] of Object.entries(temps)) {
      await mkdir(layout.hostDir(kind as 'html', HOST), { recursive: true });
      for (const name of names) await writeFile(join(layout.hostDir(kind as 'html', HOST), name), 'partial');
    }
    const asked = new Set<string>();
    const listing = await store.listHost(HOST, (id) => {
      asked.add(id);
      return id === 'gone-node';
    });
    assert.deepEqual([...asked].sort(), ['gone-node', 'live-node']);
    assert.equal(listing.removedTemps, 3);
    assert.deepEqual([...listing.linksKeys], [K1], 'temp files are never keys');
    assert.deepEqual(await readdir(layout.hostDir('html', HOST)), [temps.html[1]]);
    assert.deepEqual((await readdir(layout.hostDir('links', HOST))).sort(), [`${K1}.json`, temps.links[1]].sort());
    assert.deepEqual(await readdir(layout.hostDir('errs', HOST)), []);
  });
});
