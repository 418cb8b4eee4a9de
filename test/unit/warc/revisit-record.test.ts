import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { WARCParser, type WARCRecord } from 'warcio';
import { cdxjLine } from '../../../src/warc/cdxj.js';
import { WarcFileReader } from '../../../src/warc/warc-file-reader.js';
import { cdxEntryOf } from '../../../src/warc/warc-repair.js';
import type { Exchange } from '../../../src/warc/exchange.js';
import { type BuiltRecord, exchangeRecords } from '../../../src/warc/warc-records.js';

/**
 * A 304 of a recrawl is a revisit record that replays the page it stands for (docs/warc.md).
 * The fields checked are those the replay engines resolve a revisit with:
 * - pywb (warcserver's resolving loader and WARC path loader): a revisit whose block status is
 *   3xx is replayed as an empty redirect and the original is never loaded; otherwise the
 *   original is looked up by WARC-Refers-To-Target-URI, closest to WARC-Refers-To-Date, among
 *   lines that are not `warc/revisit` (and of the same digest when the revisit's line has
 *   one); the revisit's HTTP head is replayed if it has one (even a bare status line, with no
 *   Content-Type), the original's when its block is empty.
 * - wabac.js (ReplayWeb.page): a revisit names its original by WARC-Refers-To-Target-URI and
 *   WARC-Refers-To-Date, and the original's status, headers and payload are replayed.
 */

const URL_ = 'http://example.com/dir/';
const ORIGINAL_AT = '2026-11-23T12:00:00.250Z';

const notModified = (refersTo?: Exchange['refersTo']): Exchange => ({
  url: URL_,
  startedMs: Date.parse('2026-11-24T08:00:00Z'),
  requestHeaders: { 'if-none-match': '"v1"' },
  status: 304,
  statusText: 'Not Modified',
  rawHeaders: ['ETag', '"v1"', 'Date', 'Tue, 24 Nov 2026 08:00:00 GMT', 'Cache-Control', 'max-age=60'],
  body: null,
  truncated: false,
  ...(refersTo === undefined ? {} : { refersTo }),
});

async function parsed(built: BuiltRecord): Promise<{ record: WARCRecord; payload: Uint8Array; raw: Buffer }> {
  const raw = gunzipSync(built.bytes);
  const parser = new WARCParser(Readable.from([raw]));
  const record = (await parser.parse())!;
  const payload = await record.readFully(false);
  return { record, payload, raw };
}

describe('a 304 revisit record replays the capture it stands for (docs/warc.md)', () => {
  test("its block is empty: no 3xx (pywb would replay an empty redirect), no head to replay instead of the capture's", async () => {
    const [revisit] = await exchangeRecords(notModified({ url: URL_, date: ORIGINAL_AT }));
    const { record, payload } = await parsed(revisit);
    assert.equal(record.warcType, 'revisit');
    assert.equal(record.warcHeader('WARC-Profile'), 'http://netpreserve.org/warc/1.1/revisit/server-not-modified');
    assert.equal(record.httpHeaders, null);
    assert.equal(record.warcContentLength, 0);
    assert.equal(payload.length, 0);
    assert.equal(record.warcPayloadDigest, null);
    // It names the capture it stands for.
    assert.equal(record.warcRefersToTargetURI, URL_);
    assert.equal(record.warcRefersToDate, ORIGINAL_AT);
    assert.equal(record.warcTargetURI, URL_);
  });

  test('it keeps what the server answered: the 304 status line and its headers, in WARC fields', async () => {
    const ex = notModified({ url: URL_, date: ORIGINAL_AT });
    const [revisit] = await exchangeRecords(ex);
    const { record, raw } = await parsed(revisit);
    assert.equal(record.warcHeader('WARC-Mountcrawl-Server-Response'), 'HTTP/1.1 304 Not Modified');
    assert.deepEqual(JSON.parse(record.warcHeader('WARC-Mountcrawl-Server-Headers')!), [
      ['ETag', '"v1"'],
      ['Date', 'Tue, 24 Nov 2026 08:00:00 GMT'],
      ['Cache-Control', 'max-age=60'],
    ]);
    // The block digest is that of the block as written.
    const head = raw.indexOf('\r\n\r\n');
    const block = raw.subarray(head + 4, head + 4 + Number(record.warcContentLength));
    assert.equal(block.length, 0);
    assert.equal(record.warcHeader('WARC-Block-Digest'), `sha256:${createHash('sha256').update(block).digest('hex')}`);
  });

  test('its index line is `warc/revisit` with no status and no digest, as pywb indexes a revisit', async () => {
    const [revisit] = await exchangeRecords(notModified({ url: URL_, date: ORIGINAL_AT }));
    const line = cdxjLine({ ...revisit, digest: revisit.payloadDigest, offset: 10, length: revisit.bytes.length, filename: 'f.warc.gz' });
    assert.match(line, /^com,example\)\/dir 20261124080000 /);
    const j = JSON.parse(line.slice(line.indexOf('{'))) as Record<string, string>;
    assert.equal(j.mime, 'warc/revisit');
    assert.equal(j.status, undefined);
    assert.equal(j.digest, undefined);
  });

  test("pywb's lookup of the original from these fields finds the capture, and replays its status and headers", async () => {
    const [original] = await exchangeRecords({
      url: URL_,
      startedMs: Date.parse('2026-11-23T12:00:00.200Z'),
      requestHeaders: {},
      status: 200,
      statusText: 'OK',
      rawHeaders: ['Content-Type', 'text/html', 'ETag', '"v1"'],
      body: Buffer.from('<p>the page</p>'),
      truncated: false,
    });
    // A later capture of another content, which the revisit must not resolve to.
    const [later] = await exchangeRecords({
      ...notModified(),
      status: 200,
      statusText: 'OK',
      startedMs: Date.parse('2026-11-25T00:00:00Z'),
      rawHeaders: ['Content-Type', 'text/html'],
      body: Buffer.from('new'),
    });
    const [revisit] = await exchangeRecords(notModified({ url: URL_, date: ORIGINAL_AT }));
    const lines = [original, later, revisit].map((r, i) =>
      cdxjLine({ ...r, digest: r.payloadDigest, offset: i, length: r.bytes.length, filename: 'f.warc.gz' }),
    );
    const index: Record<string, string | undefined>[] = lines.map((l) => ({
      ...(JSON.parse(l.slice(l.indexOf('{'))) as Record<string, string | undefined>),
      key: l.split(' ')[0]!,
      ts: l.split(' ')[1]!,
    }));
    const revisitLine = index[2]!;
    assert.equal(revisitLine.mime, 'warc/revisit');
    const { record } = await parsed(revisit);
    assert.equal(record.httpHeaders, null, 'no head: not replayed as a redirect');
    const refersKey = index.find((l) => l.url === record.warcRefersToTargetURI)!.key;
    const refersTs = Number(record.warcRefersToDate!.replace(/[^0-9]/g, '').slice(0, 14));
    const candidates = index
      .filter(
        (l) => l.key === refersKey && l.mime !== 'warc/revisit' && (revisitLine.digest === undefined || l.digest === revisitLine.digest),
      )
      .sort((a, b) => Math.abs(Number(a.ts) - refersTs) - Math.abs(Number(b.ts) - refersTs));
    assert.equal(candidates[0]?.offset, '0', 'the closest capture that is not a revisit is the original');
  });

  test('a repair indexes a revisit exactly as its writer did', async () => {
    const [revisit] = await exchangeRecords(notModified({ url: URL_, date: ORIGINAL_AT }));
    const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-revisit-'));
    try {
      await writeFile(join(dir, 'f.warc.gz'), revisit.bytes);
      const records = [];
      for await (const r of new WarcFileReader(join(dir, 'f.warc.gz')).records()) records.push(r);
      const written = cdxjLine({
        ...revisit,
        digest: revisit.payloadDigest,
        offset: 0,
        length: revisit.bytes.length,
        filename: 'f.warc.gz',
      });
      assert.equal(cdxjLine(cdxEntryOf(records[0]!, 'f.warc.gz')!), written);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a 304 with no stored capture behind it stays a 304 (there is no page to stand for)', async () => {
    const [revisit] = await exchangeRecords(notModified());
    const { record } = await parsed(revisit);
    assert.equal(record.httpHeaders?.statusCode, 304);
    assert.ok(!record.warcRefersToTargetURI);
    assert.equal(record.warcHeader('WARC-Mountcrawl-Server-Response'), 'HTTP/1.1 304 Not Modified');
  });
});
