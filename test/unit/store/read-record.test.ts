import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isTornRead, jsonRecord, readLocalRecord, readRecord } from '../../../src/store/read-record.js';
import { nodeMount } from '../../../src/store/mount.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mountcrawl-read-record-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A check as the record kinds have: a TypeError for a value that is not one. */
const asPoint = (v: unknown): { x: number } => {
  if (v === null || typeof v !== 'object' || typeof (v as { x?: unknown }).x !== 'number') throw new TypeError('not a point');
  return v as { x: number };
};

describe('readRecord', () => {
  test('a whole record that passes its check: its value', async () => {
    const path = join(dir, 'ok.json');
    await writeFile(path, '{"x":1}\n');
    assert.deepEqual(await readRecord(nodeMount, path, asPoint), { kind: 'value', value: { x: 1 } });
  });

  test('no file by that name: absent', async () => {
    assert.deepEqual(await readRecord(nodeMount, join(dir, 'none.json'), asPoint), { kind: 'absent' });
  });

  test('a file cut short (it does not parse, even read again): torn, with the SyntaxError', async () => {
    const path = join(dir, 'cut.json');
    await writeFile(path, '{"x":');
    const r = await readRecord(nodeMount, path, asPoint);
    assert.equal(r.kind, 'torn');
    assert.ok(r.kind === 'torn' && r.error instanceof SyntaxError);
  });

  test("JSON that is not a record of its kind: torn, with the check's TypeError", async () => {
    const path = join(dir, 'other.json');
    await writeFile(path, '{"y":1}');
    const r = await readRecord(nodeMount, path, asPoint);
    assert.ok(r.kind === 'torn' && r.error instanceof TypeError && r.error.message === 'not a point');
  });

  test('any other failure is thrown: the caller decides (here EISDIR)', async () => {
    const path = join(dir, 'a-dir.json');
    await mkdir(path);
    await assert.rejects(readRecord(nodeMount, path, asPoint), (err: NodeJS.ErrnoException) => err.code === 'EISDIR');
  });
});

test('isTornRead: what parsing and checking throw, and nothing else', () => {
  assert.equal(isTornRead(new SyntaxError('x')), true);
  assert.equal(isTornRead(new TypeError('x')), true);
  assert.equal(isTornRead(Object.assign(new Error('x'), { code: 'EIO' })), false);
  assert.equal(isTornRead('x'), false);
});

describe('readLocalRecord', () => {
  const decode = jsonRecord(asPoint);

  test('a record, also one larger than the buffer it is read into at first: its value, read whole', async () => {
    const path = join(dir, 'local-ok.json');
    await writeFile(path, '{"x":2}\n');
    assert.deepEqual(readLocalRecord(path, decode), { kind: 'value', value: { x: 2 } });
    const big = join(dir, 'local-big.json');
    const pad = 'p'.repeat(300 * 1024);
    await writeFile(big, JSON.stringify({ x: 3, pad }));
    assert.deepEqual(readLocalRecord(big, decode), { kind: 'value', value: { x: 3, pad } });
    // The buffer grown for it still reads a small record as itself only.
    assert.deepEqual(readLocalRecord(path, decode), { kind: 'value', value: { x: 2 } });
  });

  test('absent, torn (cut short, or not of its kind): said so, and the bytes are what the file holds', async () => {
    assert.deepEqual(readLocalRecord(join(dir, 'local-none.json'), decode), { kind: 'absent' });
    const cut = join(dir, 'local-cut.json');
    await writeFile(cut, '{"x":');
    assert.equal(readLocalRecord(cut, decode).kind, 'torn');
    await writeFile(cut, '{"y":1}');
    assert.equal(readLocalRecord(cut, decode).kind, 'torn');
    assert.deepEqual(
      readLocalRecord(cut, (bytes) => bytes.toString('utf8')),
      { kind: 'value', value: '{"y":1}' },
    );
  });
});
