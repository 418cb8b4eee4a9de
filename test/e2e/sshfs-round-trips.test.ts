import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { exportCommand } from '../../src/cli/export-command.js';
import { openDataDir } from '../../src/store/data-dir.js';
import { DirHandles } from '../../src/store/dir-handles.js';
import { HostStore } from '../../src/store/host-store.js';
import { DIRS, Layout } from '../../src/store/layout.js';
import { serializeRecord } from '../../src/store/records.js';
import { urlKey } from '../../src/url/key.js';
import { NORMALIZATION_VERSION } from '../../src/url/normalize.js';
import { pageRecord } from '../support/links-records.js';
import { startSshfsPair } from '../support/sshfs-pair.js';

const HOST = 'example.org';
const PAGES = 20;
const RECORDS_A_HOST = 50;

/** SFTP requests by type that the mount's sshfs logged while `fn` ran. */
async function requestsDuring(log: string, fn: () => Promise<void>): Promise<Record<string, number>> {
  const from = (await readFile(log)).length;
  await fn();
  const text = (await readFile(log)).subarray(from).toString('latin1');
  const ops: Record<string, number> = { all: 0 };
  for (const m of text.matchAll(/^\[\d+\] (\w+)$/gm)) {
    ops[m[1]!] = (ops[m[1]!] ?? 0) + 1;
    ops.all!++;
  }
  return ops;
}

describe('round trips of a page on sshfs (docs/protocol.md, "Round trips on a network mount")', { timeout: 120_000 }, () => {
  test('through open host directories a page costs half the SFTP requests it costs by path, and writes the same files', async (t) => {
    const pair = await startSshfsPair(1, { requestLog: true });
    if ('skip' in pair) {
      assert.notEqual(process.env.CI, 'true', `sshfs is installed in CI: ${pair.skip}`);
      return t.skip(`sshfs unavailable: ${pair.skip}`);
    }
    t.after(() => pair.stop());
    const layout = new Layout(join(pair.mounts[0]!, 'data'));
    for (const d of Object.values(DIRS)) await mkdir(join(layout.root, d), { recursive: true });
    const dirs = await DirHandles.forDataDir(layout.root);
    assert.ok(dirs !== undefined, 'sshfs is a network file system: host directories are kept open');
    const log = pair.requestLogs[0]!;
    const byPath = new HostStore(layout, { nodeId: 'n1', fsync: false });
    const through = new HostStore(layout, { nodeId: 'n1', fsync: false, dirs });
    const body = new TextEncoder().encode('<p>page</p>');
    const pages = async (store: HostStore, prefix: string): Promise<void> => {
      for (let i = 0; i < PAGES; i++) {
        const url = `http://${HOST}/${prefix}${i}`;
        await store.writePage(HOST, urlKey(url), body, pageRecord(url, { links: [`http://${HOST}/a`] }));
      }
    };
    // The first page of each store makes the directories (and opens them): not counted.
    await pages(byPath, 'warm-path-');
    await pages(through, 'warm-handle-');
    const a = await requestsDuring(log, () => pages(byPath, 'path-'));
    const b = await requestsDuring(log, () => pages(through, 'handle-'));
    through.close();
    await new Promise((r) => setTimeout(r, 100)); // the descriptors' close calls, before the unmount
    const perPage = (ops: Record<string, number>, op: string): number => (ops[op] ?? 0) / PAGES;
    t.diagnostic(
      `SFTP requests per page (two atomic writes): by path ${perPage(a, 'all')} (LSTAT ${perPage(a, 'LSTAT')}), through open directories ${perPage(b, 'all')} (LSTAT ${perPage(b, 'LSTAT')})`,
    );
    assert.ok(perPage(b, 'all') <= 20, `through open directories: ${perPage(b, 'all')} requests per page`);
    assert.ok(perPage(b, 'all') <= perPage(a, 'all') - 12, `by path ${perPage(a, 'all')}, through ${perPage(b, 'all')}`);
    // The same files: every page's html file and links record, no temporary file.
    const exported = join(pair.export, 'data');
    const names = (kind: 'html' | 'links') => readdir(join(exported, kind, HOST));
    assert.equal((await names('html')).length, 4 * PAGES);
    assert.equal((await names('links')).length, 4 * PAGES);
    for (const kind of ['html', 'links'] as const)
      for (const n of await names(kind)) assert.ok(!n.startsWith('.'), `${kind}/${n}: a temporary file left`);
    const key = urlKey(`http://${HOST}/handle-0`);
    assert.equal(await readFile(join(exported, 'html', HOST, `${key}.html`), 'utf8'), '<p>page</p>');
  });

  test('export reads each record through its open host directory: 6 requests a record, and the lines of a local export', async (t) => {
    const pair = await startSshfsPair(1, { requestLog: true });
    if ('skip' in pair) {
      assert.notEqual(process.env.CI, 'true', `sshfs is installed in CI: ${pair.skip}`);
      return t.skip(`sshfs unavailable: ${pair.skip}`);
    }
    t.after(() => pair.stop());
    const local = join(pair.export, 'data');
    const { layout } = await openDataDir(local, 'n1', { version: NORMALIZATION_VERSION, sessionParams: [] });
    for (const host of [HOST, 'example.net']) {
      await mkdir(layout.hostDir('links', host), { recursive: true });
      for (let i = 0; i < RECORDS_A_HOST; i++) {
        const url = `http://${host}/p${i}`;
        await writeFile(layout.links(host, urlKey(url)), serializeRecord(pageRecord(url, { links: [`http://${host}/p${i + 1}`] })));
      }
    }
    await writeFile(layout.links(HOST, urlKey(`http://${HOST}/torn`)), '{"v": 1, "url": "http://exa');
    const run = async (dir: string): Promise<string> => {
      const chunks: Buffer[] = [];
      assert.equal(await exportCommand(dir, { errors: false, hosts: [] }, async (c) => void chunks.push(c)), 0);
      return Buffer.concat(chunks).toString('utf8');
    };
    const expected = await run(local);
    assert.equal(expected.split('\n').length - 1, 2 * RECORDS_A_HOST, 'the torn record is left out');
    let got = '';
    const ops = await requestsDuring(pair.requestLogs[0]!, async () => {
      got = await run(join(pair.mounts[0]!, 'data'));
    });
    assert.equal(got, expected);
    const records = 2 * RECORDS_A_HOST + 1;
    t.diagnostic(`SFTP requests per record read: ${JSON.stringify(ops)} for ${records} records`);
    // Through the open directory 2 LSTATs a record (its name, its attributes) and about 30 for the
    // data directory and the listings; by path each open looks up DATA, links and the host again.
    assert.ok((ops.OPEN ?? 0) >= records && (ops.LSTAT ?? 0) < 3 * records, JSON.stringify(ops));
  });
});
