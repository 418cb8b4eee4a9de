/**
 * A worker thread of RecordReadPool (src/reseed/record-read-pool.ts): reads links records with
 * synchronous calls (no thread-pool round trip per open, read and close: about a sixth of
 * the CPU per record, docs/benchmarks-log.md, "Speed per node"), parses and checks them, and sends back the links
 * it has not sent before in this scan at this depth or a lower one.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { isTornRead } from '../store/read-record.js';
import { VALIDATE_ATTEMPTS } from '../store/read-whole.js';
import { asLinksRecord } from '../store/records.js';
import { LinkMemo } from '../url/link-memo.js';
import type { BatchRequest, BatchResult, RecordResult } from './record-read-pool.js';

const pause = new Int32Array(new SharedArrayBuffer(4));
let buf = Buffer.allocUnsafe(64 * 1024);
const memo = new LinkMemo();

/** The whole file, to a read that returns 0 bytes or fewer than asked (a record is validated). */
function readAll(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    let total = 0;
    for (;;) {
      if (total === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 4);
        buf.copy(bigger, 0, 0, total);
        buf = bigger;
      }
      const asked = buf.length - total;
      const n = readSync(fd, buf, total, asked, null);
      total += n;
      if (n === 0 || n < asked) return buf.subarray(0, total);
    }
  } finally {
    closeSync(fd);
  }
}

function readOne(path: string): RecordResult {
  let lastError: unknown;
  for (let attempt = 0; attempt < VALIDATE_ATTEMPTS; attempt++) {
    let bytes: Buffer;
    try {
      bytes = readAll(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { outcome: 'skip' };
      return { outcome: 'error', code, message: (err as Error).message };
    }
    try {
      const record = asLinksRecord(JSON.parse(bytes.toString('utf8')));
      const depth = record.depth + 1;
      const links: string[] = [];
      for (const link of record.links) if (typeof link === 'string' && memo.first(link, depth)) links.push(link);
      return { outcome: 'ok', depth, links, url: record.url };
    } catch (err) {
      lastError = err;
      Atomics.wait(pause, 0, 0, 5 * (attempt + 1));
    }
  }
  // Not a record even after rereads: nothing to take from it (as the reseeder's async path).
  return isTornRead(lastError) ? { outcome: 'skip' } : { outcome: 'error', message: String(lastError) };
}

parentPort!.on('message', (req: BatchRequest) => {
  const results = req.keys.map((key) => readOne(`${req.dir}/${key}.json`));
  const reply: BatchResult = { id: req.id, results };
  parentPort!.postMessage(reply);
});
