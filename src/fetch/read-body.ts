import { Transform, type Readable, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import { FetchFailure } from '../errors.js';

/** A body read up to a cap. */
export interface BodyBytes {
  readonly body: Buffer;
  /** True when the decoded body went past the cap and was cut there. */
  readonly truncated: boolean;
}

/**
 * `deflate` is meant to be a zlib stream (RFC 9110 §8.4.1.2), but some servers send raw
 * DEFLATE: look at the first two bytes and pick the decoder, as browsers do.
 */
class InflateAuto extends Transform {
  private inner: zlib.Inflate | zlib.InflateRaw | undefined;
  /** A first chunk of one byte, held until a second byte says which decoder to use. */
  private head: Buffer | undefined;

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.inner === undefined) {
      const first = this.head === undefined ? chunk : Buffer.concat([this.head, chunk]);
      this.head = undefined;
      if (first.length < 2) {
        this.head = first;
        return done();
      }
      this.start(first).write(first, () => done());
      return;
    }
    this.inner.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    if (this.inner === undefined && this.head === undefined) return done();
    const inner = this.inner ?? this.start(this.head!);
    if (this.head !== undefined) inner.write(this.head);
    this.head = undefined;
    inner.once('end', () => done());
    inner.end();
  }

  private start(first: Buffer): zlib.Inflate | zlib.InflateRaw {
    const zlibHeader = first.length >= 2 && (first[0]! & 0x0f) === 8 && ((first[0]! << 8) | first[1]!) % 31 === 0;
    const inner = zlibHeader ? zlib.createInflate(ZLIB_LENIENT) : zlib.createInflateRaw(ZLIB_LENIENT);
    inner.on('data', (d: Buffer) => this.push(d));
    inner.on('error', (err) => this.destroy(err));
    this.inner = inner;
    return inner;
  }

  override _destroy(err: Error | null, done: (error: Error | null) => void): void {
    this.inner?.destroy();
    done(err);
  }
}

/**
 * Like browsers (and undici's fetch), a compressed body that ends early gives what could be
 * decoded instead of an error: servers that cut a stream short are common.
 */
const ZLIB_LENIENT = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BROTLI_LENIENT = {
  flush: zlib.constants.BROTLI_OPERATION_FLUSH,
  finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
};

function decoderFor(coding: string): Transform | undefined {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip(ZLIB_LENIENT);
    case 'deflate':
      return new InflateAuto();
    case 'br':
      return zlib.createBrotliDecompress(BROTLI_LENIENT);
    case 'identity':
    case '':
      return undefined;
    default:
      throw new FetchFailure('UNSUPPORTED_ENCODING', 'final', `unsupported Content-Encoding: ${coding}`);
  }
}

/**
 * Reads `source` to its end or until `cap` decoded bytes, decoding the Content-Encoding
 * (gzip, deflate, br, in the order the header lists them) as a stream. The cap counts decoded
 * bytes, so a compression bomb stops at the cap with memory bounded by it; the rest of the
 * response is abandoned (its connection closed). An unsupported coding rejects with
 * UNSUPPORTED_ENCODING, and `source` is destroyed unread.
 */
export async function readBody(source: Readable, contentEncoding: string | undefined, cap: number): Promise<BodyBytes> {
  return collect(source, decodersOf(source, contentEncoding), cap);
}

/**
 * Hands the decoded body of `source` to `consume` as a stream, never holding it whole (a
 * sitemap of 50 MB): `consume` reads as much as it wants and its own limits apply. A failure
 * of the body or of a decoder reaches `consume` as an error of the stream it reads. When
 * `consume` settles, whatever it left unread is abandoned (its connection closed).
 */
export async function streamBody(
  source: Readable,
  contentEncoding: string | undefined,
  consume: (body: Readable) => Promise<void>,
): Promise<void> {
  const streams: Readable[] = [source, ...decodersOf(source, contentEncoding)];
  const last = streams[streams.length - 1]!;
  // The reader sees a failure of any stream as an error of the one it reads.
  chain(streams, (err) => last.destroy(err));
  try {
    await consume(last);
  } finally {
    for (const s of streams) s.destroy();
  }
}

/** The decoders of a Content-Encoding, last applied first; `source` is destroyed when one is not supported. */
function decodersOf(source: Readable, contentEncoding: string | undefined): Transform[] {
  const codings = (contentEncoding ?? '')
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity')
    .reverse();
  try {
    return codings.map(decoderFor).filter((d): d is Transform => d !== undefined);
  } catch (err) {
    source.destroy(); // the body will not be read: let its connection go
    throw err;
  }
}

/**
 * Pipes each stream into the next. `fail` hears an error of any of them, or a close before
 * its end: pipe() passes on neither.
 */
function chain(streams: readonly Readable[], fail: (err: Error) => void): void {
  for (let i = 0; i < streams.length; i++) {
    const s = streams[i]!;
    s.on('error', fail);
    s.on('close', () => {
      if (!s.readableEnded) fail(new Error('body stream closed before its end'));
    });
    if (i + 1 < streams.length) s.pipe(streams[i + 1] as Transform);
  }
}

/**
 * Pipes `source` through `decoders` and gathers what comes out, up to `cap` bytes. Plain
 * stream events rather than stream.pipeline: pipeline allocates an AbortController and a
 * DOMException per call, a measurable cost per page (docs/benchmarks-log.md, "Where the time goes").
 */
function collect(source: Readable, decoders: readonly Transform[], cap: number): Promise<BodyBytes> {
  const streams: (Readable | Transform)[] = [source, ...decoders];
  const last = streams[streams.length - 1]!;
  return new Promise<BodyBytes>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (err: Error | undefined, truncated: boolean): void => {
      if (settled) return;
      settled = true;
      if (truncated || err !== undefined) for (const s of streams) s.destroy();
      if (err !== undefined) reject(err);
      else resolve({ body: Buffer.concat(chunks, total), truncated });
    };
    chain(streams, (err) => settle(err, false));
    last.on('data', (chunk: Buffer) => {
      if (settled) return;
      const room = cap - total;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        total += room;
        settle(undefined, true);
        return;
      }
      chunks.push(chunk);
      total += chunk.length;
    });
    last.on('end', () => settle(undefined, false));
  });
}
