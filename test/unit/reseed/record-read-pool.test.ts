import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RecordReadPool } from '../../../src/reseed/record-read-pool.js';
import { RECORD_VERSION, serializeRecord } from '../../../src/store/records.js';
import { urlKey } from '../../../src/url/key.js';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mountcrawl-read-pool-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** One links record in `dir`, linking to `link`; returns its key. */
async function record(dir: string, url: string, link: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const key = urlKey(url);
  const rec = {
    v: RECORD_VERSION,
    url,
    finalUrl: url,
    status: 200,
    contentType: 'text/html',
    bytes: 1,
    fetchedAt: new Date(0).toISOString(),
    depth: 0,
    links: [link],
    etag: null,
    lastModified: null,
  };
  await writeFile(join(dir, `${key}.json`), serializeRecord(rec as never));
  return key;
}

describe('RecordReadPool', () => {
  test('directories scanned at once get workers of their own, and a released worker takes the next', async () => {
    // "a" and "c" fell on one worker of two when a directory's worker was a hash of its name.
    const a = await record(join(root, 'a'), 'http://a/', 'http://a/1');
    const c = await record(join(root, 'c'), 'http://c/', 'http://c/1');
    const pool = new RecordReadPool(2);
    try {
      const reads = [pool.read('a', join(root, 'a'), [a]), pool.read('a', join(root, 'a'), [a])];
      assert.equal(pool.hasRoom('a'), false, 'two batches in flight fill a worker');
      assert.equal(pool.hasRoom('c'), true, 'a second directory gets the other worker');
      reads.push(pool.read('c', join(root, 'c'), [c]));
      const [first, second, third] = await Promise.all(reads);
      assert.deepEqual(first!.results[0], { outcome: 'ok', depth: 1, links: ['http://a/1'], url: 'http://a/' });
      assert.deepEqual(
        second!.results[0],
        { outcome: 'ok', depth: 1, links: [], url: 'http://a/' },
        'the worker remembers the link it sent',
      );
      assert.deepEqual(third!.results[0], { outcome: 'ok', depth: 1, links: ['http://c/1'], url: 'http://c/' });
      pool.release('a');
      pool.release('c');
      // Both workers free again: a third directory and a fourth do not share one.
      const d = await record(join(root, 'd'), 'http://d/', 'http://d/1');
      await Promise.all([pool.read('d', join(root, 'd'), [d]), pool.read('d', join(root, 'd'), [d])]);
      assert.equal(pool.hasRoom('e'), true);
    } finally {
      await pool.close();
    }
  });
});
