import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * An independent WARC reader for the tests: it shares no code with src/warc/. Members are
 * found by trying every gzip magic number as the next start (gunzip checks each member's
 * CRC), and records are parsed from the raw bytes with nothing but Content-Length.
 */

export interface ParsedRecord {
  readonly offset: number;
  readonly length: number;
  readonly headers: Map<string, string>;
  readonly block: Buffer;
  /** For request and response records: the HTTP head and payload. */
  readonly http?: { readonly firstLine: string; readonly headers: [string, string][]; readonly payload: Buffer };
}

function parseFields(text: string): [string, string][] {
  return text
    .split('\r\n')
    .filter((l) => l !== '')
    .map((l) => {
      const i = l.indexOf(':');
      return [l.slice(0, i), l.slice(i + 1).trim()];
    });
}

/** One WARC record from the bytes of one gzip member, or undefined when they are not one whole record. */
export function parseRecord(data: Buffer, offset: number, length: number): ParsedRecord | undefined {
  const headEnd = data.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const lines = data.subarray(0, headEnd).toString('utf8').split('\r\n');
  if (lines[0] !== 'WARC/1.1' && lines[0] !== 'WARC/1.0') return undefined;
  const headers = new Map(parseFields(lines.slice(1).join('\r\n')).map(([k, v]) => [k.toLowerCase(), v] as [string, string]));
  const n = Number(headers.get('content-length'));
  const block = data.subarray(headEnd + 4, headEnd + 4 + n);
  if (block.length !== n || data.length !== headEnd + 4 + n + 4 || data.subarray(headEnd + 4 + n).toString() !== '\r\n\r\n')
    return undefined;
  const type = headers.get('warc-type');
  // A revisit that stands for a capture has an empty block: no HTTP head.
  if (type === 'response' || type === 'request' || (type === 'revisit' && block.length > 0)) {
    const h = block.indexOf('\r\n\r\n');
    const head = block.subarray(0, h).toString('latin1').split('\r\n');
    return {
      offset,
      length,
      headers,
      block,
      http: { firstLine: head[0]!, headers: parseFields(head.slice(1).join('\r\n')), payload: block.subarray(h + 4) },
    };
  }
  return { offset, length, headers, block };
}

/** The records of a file, and the bytes after the last whole one (a torn tail). */
export function parseWarcFile(buf: Buffer): { records: ParsedRecord[]; tail: number } {
  const starts: number[] = [];
  for (let i = buf.indexOf(Buffer.from([0x1f, 0x8b, 0x08])); i >= 0; i = buf.indexOf(Buffer.from([0x1f, 0x8b, 0x08]), i + 1))
    starts.push(i);
  starts.push(buf.length);
  const records: ParsedRecord[] = [];
  let at = 0;
  outer: while (at < buf.length) {
    for (const end of starts) {
      if (end <= at) continue;
      let data: Buffer;
      try {
        data = gunzipSync(buf.subarray(at, end));
      } catch {
        continue;
      }
      const rec = parseRecord(data, at, end - at);
      if (rec === undefined) continue; // two members or more: try a nearer end... (never: ends only grow)
      records.push(rec);
      at = end;
      continue outer;
    }
    break;
  }
  return { records, tail: buf.length - at };
}

export function sha256(b: Buffer): string {
  return `sha256:${createHash('sha256').update(b).digest('hex')}`;
}

export interface WarcSet {
  readonly files: string[];
  readonly responses: ParsedRecord[];
  /** Revisit records (304s of a recrawl), counted as responses in every other check. */
  readonly revisits: ParsedRecord[];
  readonly requests: ParsedRecord[];
  readonly all: ParsedRecord[];
}

/**
 * Reads every WARC file of `warcDir` and checks what must hold of each: it starts with one
 * warcinfo, every record is whole (no tail unless `allowTail`), digests verify, responses say
 * what their payload is, requests point at a response of the same URL, and the CDXJ lines
 * point at exactly the response records, never past the end of the file.
 */
export async function checkWarcDir(warcDir: string, options: { allowOpen?: boolean; allowTail?: boolean } = {}): Promise<WarcSet> {
  const names = (await readdir(warcDir)).filter((n) => !n.startsWith('.')).sort();
  const files = names.filter((n) => /\.warc\.gz(\.open)?$/.test(n));
  if (!options.allowOpen)
    assert.deepEqual(
      files.filter((f) => f.endsWith('.open')),
      [],
      'files left open',
    );
  const set: WarcSet = { files, responses: [], revisits: [], requests: [], all: [] };
  for (const name of files) {
    const buf = await readFile(join(warcDir, name));
    const { records, tail } = parseWarcFile(buf);
    if (!options.allowTail) assert.equal(tail, 0, `${name}: ${tail} bytes after the last whole record`);
    assert.equal(records[0]?.headers.get('warc-type'), 'warcinfo', `${name} starts with warcinfo`);
    assert.equal(records.filter((r) => r.headers.get('warc-type') === 'warcinfo').length, 1, `${name}: one warcinfo`);
    const ids = new Map<string, ParsedRecord>();
    for (const r of records) {
      set.all.push(r);
      ids.set(r.headers.get('warc-record-id')!, r);
      const type = r.headers.get('warc-type');
      if (type === 'warcinfo') continue;
      assert.equal(r.headers.get('warc-block-digest'), sha256(r.block), `block digest of ${type} ${r.headers.get('warc-target-uri')}`);
      if (type === 'revisit') {
        // A 304 (WARC 1.1, 6.7.3), kept in WARC-Mountcrawl-Server-Response; the block is empty
        // when the record stands for the capture it refers to (replay takes the capture's status,
        // headers and payload), the 304 head when it refers to none. No payload digest.
        set.revisits.push(r);
        assert.equal(r.headers.get('warc-profile'), 'http://netpreserve.org/warc/1.1/revisit/server-not-modified');
        assert.match(r.headers.get('warc-mountcrawl-server-response') ?? '', /^HTTP\/1\.1 304/);
        if (r.headers.has('warc-refers-to-target-uri')) {
          assert.equal(r.block.length, 0);
          assert.equal(r.http, undefined);
        } else {
          assert.match(r.http!.firstLine, /^HTTP\/1\.1 304/);
          assert.equal(r.http!.payload.length, 0);
        }
        assert.equal(r.headers.get('warc-payload-digest'), undefined);
        continue;
      }
      assert.equal(r.headers.get('warc-payload-digest'), sha256(r.http!.payload), 'payload digest');
      if (type === 'response') {
        set.responses.push(r);
        const h = new Map(r.http!.headers.map(([k, v]) => [k.toLowerCase(), v]));
        assert.equal(h.get('content-length'), String(r.http!.payload.length), 'Content-Length says the stored payload');
        assert.ok(!h.has('content-encoding') && !h.has('transfer-encoding'), 'decoded payload, headers say so');
        assert.match(r.http!.firstLine, /^HTTP\/1\.1 \d{3}/);
      } else {
        assert.equal(type, 'request');
        set.requests.push(r);
      }
    }
    // Every request is concurrent to a response of the same URL in the same file, and each response has one.
    const paired = new Set<string>();
    for (const q of records.filter((r) => r.headers.get('warc-type') === 'request')) {
      const to = ids.get(q.headers.get('warc-concurrent-to')!);
      assert.ok(['response', 'revisit'].includes(to?.headers.get('warc-type') ?? ''), 'request points at a response or revisit');
      assert.equal(to!.headers.get('warc-target-uri'), q.headers.get('warc-target-uri'));
      assert.match(q.http!.firstLine, /^GET \S+ HTTP\/1\.1$/);
      paired.add(to!.headers.get('warc-record-id')!);
    }
    const responses = records.filter((r) => ['response', 'revisit'].includes(r.headers.get('warc-type')!));
    if (!options.allowTail) assert.equal(paired.size, responses.length, `${name}: every response has its request`);
    // The index: one line per response record, at exactly its offset and length.
    const cdxName = name.replace(/\.open$/, '').replace(/\.warc\.gz$/, '.cdxj');
    const cdx = await readFile(join(warcDir, cdxName), 'utf8');
    const lines = cdx.split('\n').filter((l) => l !== '');
    // The index of a file still open is appended to: a write that failed (a full disk) can
    // leave its last line without its newline, as it leaves a torn record at the end of the
    // WARC; the writer cuts it off at its next write, a repair writes the index again.
    if (options.allowTail && name.endsWith('.open') && cdx !== '' && !cdx.endsWith('\n')) lines.pop();
    if (!name.endsWith('.open')) {
      // A closed file's index is sorted as `LC_ALL=C sort` sorts it (docs/warc.md, "Sorted indexes").
      const sorted = [...lines].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      assert.deepEqual(lines, sorted, `${cdxName} is not sorted`);
    }
    const byOffset = new Map(responses.map((r) => [r.offset, r]));
    for (const line of lines) {
      const j = JSON.parse(line.slice(line.indexOf('{'))) as Record<string, string>;
      const offset = Number(j.offset);
      const length = Number(j.length);
      assert.ok(offset + length <= buf.length, `${cdxName} points past the end of ${name}`);
      const one = parseRecord(gunzipSync(buf.subarray(offset, offset + length)), offset, length);
      assert.ok(one !== undefined, `${cdxName}: ${offset}+${length} is exactly one record`);
      assert.equal(one.headers.get('warc-target-uri'), j.url);
      if (j.mime === 'warc/revisit') {
        // As pywb indexes a revisit: no status, no digest (docs/warc.md).
        assert.equal(one.headers.get('warc-type'), 'revisit');
        assert.equal(j.status, undefined);
        assert.equal(j.digest, undefined);
      } else {
        assert.equal(one.http!.firstLine.split(' ')[1], j.status);
      }
      assert.equal(j.filename, name.replace(/\.open$/, ''));
      assert.ok(byOffset.has(offset), 'a line for a response record');
    }
    if (!options.allowOpen || !name.endsWith('.open')) assert.equal(lines.length, responses.length, `${cdxName}: a line per response`);
  }
  return set;
}

/** `url status` of every response record. */
export function responsePairs(set: WarcSet): Set<string> {
  return new Set(set.responses.map((r) => `${r.headers.get('warc-target-uri')} ${r.http!.firstLine.split(' ')[1]}`));
}
