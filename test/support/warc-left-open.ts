import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Exchange } from '../../src/warc/exchange.js';
import { exchangeRecords, warcinfoRecord } from '../../src/warc/warc-records.js';

/** A writer process of another machine (its warcinfo says so). */
export const FAR = { hostname: 'far-away-machine', bootId: 'another-boot/pid:[4026531836]', pid: 4242 };

/** An exchange of a 200 HTML page at http://127.0.0.1:9/PATH. */
export function exchange(path: string, body: string): Exchange {
  return {
    url: `http://127.0.0.1:9/${path}`,
    startedMs: Date.UTC(2026, 10, 23, 12),
    requestHeaders: { 'user-agent': 'test' },
    status: 200,
    statusText: 'OK',
    rawHeaders: ['Content-Type', 'text/html'],
    body: Buffer.from(body),
    truncated: false,
  };
}

/**
 * A `.open` file as a node `node` of another machine leaves it when killed mid-write: two
 * whole exchanges, a response whose request was never written, half a gzip member; and an
 * index with a line for that lone response.
 */
export async function leftOpen(dir: string, node: string, seq: number): Promise<string> {
  const name = `20261123120000000-${node}-${String(seq).padStart(5, '0')}.warc.gz`;
  const info = await warcinfoRecord(
    name,
    { hostname: FAR.hostname, 'mountcrawl-node': node, 'mountcrawl-pid': String(FAR.pid), 'mountcrawl-boot-id': FAR.bootId },
    Date.now(),
  );
  const parts = [info.bytes];
  let cdx = '';
  for (const p of ['a', 'b', 'c']) {
    const [resp, req] = await exchangeRecords(exchange(p, `<p>${p}</p>`));
    const offset = parts.reduce((n, b) => n + b.length, 0);
    cdx += `x ${p} {"url":"${resp.url}","status":"200","offset":"${offset}","length":"${resp.bytes.length}","filename":"${name}"}\n`;
    parts.push(resp.bytes);
    if (p !== 'c') parts.push(req.bytes);
  }
  const torn = gzipSync(Buffer.from(`WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 9000\r\n\r\n${'x'.repeat(3000)}`));
  parts.push(torn.subarray(0, torn.length >> 1));
  await writeFile(join(dir, `${name}.open`), Buffer.concat(parts));
  await writeFile(join(dir, name.replace(/\.warc\.gz$/, '.cdxj')), cdx);
  return name;
}
