import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { WARCRecord } from 'warcio';
import { surtOf } from './cdxj.js';
import { loadWarcio } from './warcio.js';
import type { Exchange } from './exchange.js';

const gzip = promisify(zlib.gzip);

/** One serialized WARC record: its own gzip member, and what an index needs of it. */
export interface BuiltRecord {
  /** The whole record as one gzip member. */
  readonly bytes: Buffer;
  readonly id: string;
  readonly type: string;
  readonly url: string;
  readonly date: string;
  readonly payloadDigest: string;
  readonly status: number;
  readonly mime: string;
  /** SURT of the URL, for the index. */
  readonly surt: string;
}

/** Digests as warcio writes them by default (and pywb, Browsertrix): SHA-256, hex. */
const SERIALIZE = { gzip: false, digest: { algo: 'sha-256', prefix: 'sha256:', base32: false } } as const;

/**
 * Response headers rewritten to describe the payload stored, which is the decoded body: a
 * Content-Encoding, Transfer-Encoding or Content-Length as received is kept under the name
 * `X-Archive-Orig-<name>` (the prefix pywb and warcprox use), and a Content-Length of the
 * stored payload is added. Every response record is written this way (docs/warc.md).
 */
export function rewriteResponseHeaders(raw: readonly string[], payloadLength: number): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    const value = raw[i + 1]!;
    if (lower === 'content-encoding' || lower === 'transfer-encoding' || lower === 'content-length') {
      out.push([`X-Archive-Orig-${name}`, value]);
    } else {
      out.push([name, value]);
    }
  }
  out.push(['Content-Length', String(payloadLength)]);
  return out;
}

function mediaTypeOf(raw: readonly string[]): string {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'content-type') return raw[i + 1]!.split(';')[0]!.trim().toLowerCase() || '-';
  }
  return '-';
}

/**
 * Sets the record's digests with node:crypto before warcio serializes it (it then skips its
 * own hashing: hash-wasm instantiates a WebAssembly module per hasher, which cost about 3 ms
 * of CPU per page on the bench). The block is what warcio writes: the HTTP head as its
 * `toString()` gives it, CRLF, the payload.
 */
function setDigests(record: WARCRecord, payload: Buffer | 'revisit'): void {
  // A revisit that stands for a capture has an empty block (no HTTP head).
  const head = record.httpHeaders === null ? Buffer.alloc(0) : Buffer.from(`${record.httpHeaders.toString()}\r\n`);
  // A server-not-modified revisit has no payload, so no payload digest (its block is the head).
  const block = createHash('sha256')
    .update(head)
    .update(payload === 'revisit' ? Buffer.alloc(0) : payload)
    .digest('hex');
  if (payload !== 'revisit')
    record.warcHeaders.headers.set('WARC-Payload-Digest', `sha256:${createHash('sha256').update(payload).digest('hex')}`);
  record.warcHeaders.headers.set('WARC-Block-Digest', `sha256:${block}`);
}

/** Level 1: half the CPU of zlib's default (6) for files about 9% larger (bench site pages). */
const GZIP = { level: 1 };

async function build(record: WARCRecord, status: number, mime: string, payload?: Buffer | 'revisit'): Promise<BuiltRecord> {
  if (payload !== undefined) setDigests(record, payload);
  const { WARCSerializer } = await loadWarcio();
  const plain = await WARCSerializer.serialize(record, SERIALIZE);
  const h = record.warcHeaders.headers;
  return {
    bytes: await gzip(plain, GZIP),
    id: h.get('WARC-Record-ID') ?? '',
    type: h.get('WARC-Type') ?? '',
    url: h.get('WARC-Target-URI') ?? '',
    date: h.get('WARC-Date') ?? '',
    payloadDigest: h.get('WARC-Payload-Digest') ?? '',
    status,
    mime,
    surt: surtOf(h.get('WARC-Target-URI') ?? ''),
  };
}

/**
 * The response record of an exchange and its request record (WARC-Concurrent-To the
 * response), in the order they are written. An error status and a redirect are recorded like
 * any response; a body cut short says `WARC-Truncated: length`.
 */
export async function exchangeRecords(ex: Exchange): Promise<[BuiltRecord, BuiltRecord]> {
  const { WARCRecord } = await loadWarcio();
  const date = new Date(ex.startedMs).toISOString();
  const payload = ex.body ?? Buffer.alloc(0);
  const statusline = `HTTP/1.1 ${ex.status} ${ex.statusText}`.trimEnd();
  const builtResponse = ex.status === 304 ? await revisitRecord(ex, date, statusline) : await responseRecord(ex, date, statusline, payload);
  const u = new URL(ex.url);
  const request = WARCRecord.create(
    {
      url: ex.url,
      date,
      type: 'request',
      warcVersion: 'WARC/1.1',
      statusline: `GET ${u.pathname}${u.search} HTTP/1.1`,
      httpHeaders: [['Host', u.host], ...Object.entries(ex.requestHeaders)],
      keepHeadersCase: true,
      warcHeaders: { 'WARC-Concurrent-To': builtResponse.id },
    },
    [],
  );
  return [builtResponse, await build(request, 0, '-', Buffer.alloc(0))];
}

/** WARC-Profile of a revisit record for a 304 answer (WARC 1.1, section 6.7.3). */
export const SERVER_NOT_MODIFIED = 'http://netpreserve.org/warc/1.1/revisit/server-not-modified';

/** WARC fields of a revisit that keep what the server answered: its status line, and its header lines as JSON pairs. */
export const SERVER_RESPONSE_FIELD = 'WARC-Mountcrawl-Server-Response';
export const SERVER_HEADERS_FIELD = 'WARC-Mountcrawl-Server-Headers';

/**
 * A 304 Not Modified, as a `revisit` record of profile server-not-modified (docs/warc.md).
 * When the request's validators came from a stored capture (a recrawl), the record stands for
 * that capture so that replay tools show the page: it names it (WARC-Refers-To-Target-URI, and
 * WARC-Refers-To-Date the capture's own WARC-Date, which its links record keeps as
 * `capturedAt`), and its block is empty: pywb and wabac.js then
 * replay the capture's own status line, headers and payload (with the 304's head in the block,
 * pywb replays an empty 304, as it does any 3xx revisit; with a status line and no headers, it
 * replays that status line with no Content-Type). What the server answered is kept whole in
 * two WARC fields: WARC-Mountcrawl-Server-Response (`HTTP/1.1 304 Not Modified`) and
 * WARC-Mountcrawl-Server-Headers (its header lines, `[[name, value], ...]`). A 304 with no
 * stored capture behind it (nothing to stand for) keeps the 304 head as its block.
 * Its index line says `warc/revisit`, with no status and no digest, as pywb's indexer writes it.
 */
async function revisitRecord(ex: Exchange, date: string, statusline: string): Promise<BuiltRecord> {
  const { WARCRecord, StatusAndHeaders, HeadersMultiMap } = await loadWarcio();
  const received: [string, string][] = [];
  for (let i = 0; i + 1 < ex.rawHeaders.length; i += 2) received.push([ex.rawHeaders[i]!, ex.rawHeaders[i + 1]!]);
  const refers = ex.refersTo;
  const refersDate = refers === undefined ? undefined : new Date(refers.date).toISOString();
  const revisit = WARCRecord.create(
    {
      url: ex.url,
      date,
      type: 'revisit',
      warcVersion: 'WARC/1.1',
      ...(refers === undefined ? { statusline, httpHeaders: received } : { refersToUrl: refers.url, refersToDate: refersDate }),
      keepHeadersCase: true,
    },
    [],
  );
  const h = revisit.warcHeaders.headers;
  // warcio names the identical-payload-digest profile for every revisit.
  h.set('WARC-Profile', SERVER_NOT_MODIFIED);
  h.set(SERVER_RESPONSE_FIELD, statusline);
  h.set(SERVER_HEADERS_FIELD, JSON.stringify(received));
  if (refers !== undefined) {
    revisit.httpHeaders = null;
  } else if (revisit.httpHeaders === null) {
    // warcio leaves out an HTTP head with no header lines: keep the status line anyway.
    revisit.httpHeaders = new StatusAndHeaders({ statusline, headers: new HeadersMultiMap() });
  }
  return build(revisit, ex.status, 'warc/revisit', 'revisit');
}

async function responseRecord(ex: Exchange, date: string, statusline: string, payload: Buffer): Promise<BuiltRecord> {
  const { WARCRecord } = await loadWarcio();
  const response = WARCRecord.create(
    {
      url: ex.url,
      date,
      type: 'response',
      warcVersion: 'WARC/1.1',
      statusline,
      httpHeaders: rewriteResponseHeaders(ex.rawHeaders, payload.length),
      keepHeadersCase: true,
      ...(ex.truncated || ex.body === null ? { warcHeaders: { 'WARC-Truncated': 'length' } } : {}),
    },
    [payload],
  );
  return build(response, ex.status, mediaTypeOf(ex.rawHeaders), payload);
}

/** The warcinfo record that opens each file: what wrote it, and where (for repair). */
export async function warcinfoRecord(filename: string, info: Record<string, string>, dateMs: number): Promise<BuiltRecord> {
  const { WARCRecord } = await loadWarcio();
  const record = WARCRecord.createWARCInfo(
    { filename, warcVersion: 'WARC/1.1', date: new Date(dateMs).toISOString(), type: 'warcinfo' },
    info,
  );
  return build(record, 0, '-');
}
