import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
  const codings = (contentEncoding ?? '')
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity')
    .reverse();
  let decoders: Transform[];
  try {
    decoders = codings.map(decoderFor).filter((d): d is Transform => d !== undefined);
  } catch (err) {
    source.destroy(); // the body will not be read: let its connection go
    throw err;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  try {
    // pipeline's typings do not cover a variable number of transforms before a sink.
    await (pipeline as (...streams: unknown[]) => Promise<void>)(
      source,
      ...decoders,
      async (decoded: AsyncIterable<Buffer>) => {
        for await (const chunk of decoded) {
          const room = cap - total;
          if (chunk.length > room) {
            chunks.push(chunk.subarray(0, room));
            total += room;
            truncated = true;
            return;
          }
          chunks.push(chunk);
          total += chunk.length;
        }
      },
    );
  } catch (err) {
    // Stopping early at the cap tears the pipeline down: not an error.
    if (!truncated) throw err;
  }
  return { body: Buffer.concat(chunks, total), truncated };
}
