import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import zlib from 'node:zlib';
import { FetchFailure } from '../../../src/errors.js';
import { readBody } from '../../../src/fetch/read-body.js';

const MiB = 1024 * 1024;

/** A text long enough to span many chunks, with no repeats so that a cut shows where it is. */
const TEXT = Buffer.from(Array.from({ length: 4000 }, (_, i) => `line ${i}\n`).join(''));

/** `bytes` split into chunks of `size`, so that decoders see a stream, not one buffer. */
function chunked(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

const source = (bytes: Buffer, chunkSize = 1000): Readable => Readable.from(chunked(bytes, chunkSize));

describe('readBody: content codings', () => {
  test('no Content-Encoding and identity pass the bytes through', async () => {
    for (const enc of [undefined, '', 'identity', 'IDENTITY']) {
      const r = await readBody(source(TEXT), enc, 10 * MiB);
      assert.deepEqual(r, { body: TEXT, truncated: false }, String(enc));
    }
  });

  test('gzip and x-gzip, in any case', async () => {
    for (const enc of ['gzip', 'x-gzip', 'GZIP', ' gzip ']) {
      const r = await readBody(source(zlib.gzipSync(TEXT), 7), enc, 10 * MiB);
      assert.ok(r.body.equals(TEXT), enc);
      assert.equal(r.truncated, false);
    }
  });

  test('deflate as a zlib stream (RFC 9110) and as raw DEFLATE (what some servers send)', async () => {
    const wrapped = await readBody(source(zlib.deflateSync(TEXT), 7), 'deflate', 10 * MiB);
    assert.ok(wrapped.body.equals(TEXT));
    const raw = await readBody(source(zlib.deflateRawSync(TEXT), 7), 'deflate', 10 * MiB);
    assert.ok(raw.body.equals(TEXT));
  });

  test('deflate whose first chunk is a single byte is still recognised', async () => {
    for (const encoded of [zlib.deflateSync(TEXT), zlib.deflateRawSync(TEXT)]) {
      const chunks = [encoded.subarray(0, 1), encoded.subarray(1, 2), encoded.subarray(2)];
      const r = await readBody(Readable.from(chunks), 'deflate', 10 * MiB);
      assert.ok(r.body.equals(TEXT));
    }
  });

  test('deflate delivered one byte at a time', async () => {
    const r = await readBody(source(zlib.deflateSync(Buffer.from('hello, world')), 1), 'deflate', 1000);
    assert.equal(r.body.toString(), 'hello, world');
  });

  test('br (Brotli)', async () => {
    const r = await readBody(source(zlib.brotliCompressSync(TEXT), 7), 'br', 10 * MiB);
    assert.ok(r.body.equals(TEXT));
    assert.equal(r.truncated, false);
  });

  test('stacked codings are undone in reverse order of the header: "gzip, br" is br(gzip(body))', async () => {
    const encoded = zlib.brotliCompressSync(zlib.gzipSync(TEXT));
    const r = await readBody(source(encoded), 'gzip, br', 10 * MiB);
    assert.ok(r.body.equals(TEXT));
    // identity entries in the list change nothing
    const r2 = await readBody(source(encoded), 'gzip,identity , br', 10 * MiB);
    assert.ok(r2.body.equals(TEXT));
  });
});

describe('readBody: the cap counts decoded bytes', () => {
  test('identity body over the cap is cut at exactly the cap', async () => {
    const r = await readBody(source(TEXT, 333), undefined, 5000);
    assert.equal(r.truncated, true);
    assert.equal(r.body.length, 5000);
    assert.ok(r.body.equals(TEXT.subarray(0, 5000)));
  });

  test('gzip body: the cap applies to the decoded bytes, not the compressed ones', async () => {
    const encoded = zlib.gzipSync(TEXT);
    assert.ok(encoded.length < 20_000 && TEXT.length > 30_000);
    const r = await readBody(source(encoded, 100), 'gzip', 20_000);
    assert.equal(r.truncated, true);
    assert.equal(r.body.length, 20_000);
    assert.ok(r.body.equals(TEXT.subarray(0, 20_000)));
  });

  test('a body of exactly the cap is not truncated', async () => {
    const r = await readBody(source(zlib.gzipSync(TEXT)), 'gzip', TEXT.length);
    assert.equal(r.truncated, false);
    assert.ok(r.body.equals(TEXT));
  });

  test('one byte over the cap is truncated', async () => {
    const r = await readBody(source(TEXT), undefined, TEXT.length - 1);
    assert.equal(r.truncated, true);
    assert.equal(r.body.length, TEXT.length - 1);
  });

  test('stopping at the cap abandons the rest of the source', async () => {
    const src = source(TEXT, 100);
    const r = await readBody(src, undefined, 1000);
    assert.equal(r.truncated, true);
    assert.equal(src.destroyed, true);
  });

  test('an empty body', async () => {
    assert.deepEqual(await readBody(Readable.from([]), undefined, 100), { body: Buffer.alloc(0), truncated: false });
  });
});

/** `total` zero bytes compressed by a stream, never holding the decoded bytes at once. */
async function compressZeros(compressor: zlib.Gzip | zlib.BrotliCompress, total: number): Promise<Buffer> {
  const out: Buffer[] = [];
  compressor.on('data', (d: Buffer) => out.push(d));
  const done = new Promise((resolve, reject) => {
    compressor.on('end', resolve);
    compressor.on('error', reject);
  });
  const zeros = Buffer.alloc(MiB);
  for (let written = 0; written < total; written += zeros.length) {
    if (!compressor.write(zeros)) await new Promise((resolve) => compressor.once('drain', resolve));
  }
  compressor.end();
  await done;
  return Buffer.concat(out);
}

/** Reads `encoded` with a 1 MiB cap and returns the result and the largest RSS growth seen. */
async function readBomb(encoded: Buffer, encoding: string): Promise<{ length: number; truncated: boolean; growthMiB: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 1);
  try {
    const r = await readBody(Readable.from([encoded]), encoding, MiB);
    peak = Math.max(peak, process.memoryUsage.rss());
    return { length: r.body.length, truncated: r.truncated, growthMiB: (peak - before) / MiB };
  } finally {
    clearInterval(sampler);
  }
}

describe('readBody: compression bombs', () => {
  // 100 MiB of zeros compress to about 100 KiB (gzip) or under 1 KiB (br). Decoding one in full
  // would grow the process by 100 MiB or more; stopping at the cap keeps it to a few MiB.
  const BOMB = 100 * MiB;
  const LIMIT_MiB = 40;

  test('100 MiB of zeros gzipped stops at a 1 MiB cap with bounded memory', async () => {
    const encoded = await compressZeros(zlib.createGzip(), BOMB);
    assert.ok(encoded.length < MiB);
    const r = await readBomb(encoded, 'gzip');
    assert.equal(r.length, MiB);
    assert.equal(r.truncated, true);
    assert.ok(r.growthMiB < LIMIT_MiB, `RSS grew by ${r.growthMiB.toFixed(1)} MiB`);
  });

  test('the same bomb as deflate', async () => {
    const encoded = await compressZeros(zlib.createDeflate(), BOMB);
    const r = await readBomb(encoded, 'deflate');
    assert.equal(r.length, MiB);
    assert.equal(r.truncated, true);
    assert.ok(r.growthMiB < LIMIT_MiB, `RSS grew by ${r.growthMiB.toFixed(1)} MiB`);
  });

  test('the same bomb as br', async () => {
    const brotli = zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } });
    const encoded = await compressZeros(brotli, BOMB);
    const r = await readBomb(encoded, 'br');
    assert.equal(r.length, MiB);
    assert.equal(r.truncated, true);
    assert.ok(r.growthMiB < LIMIT_MiB, `RSS grew by ${r.growthMiB.toFixed(1)} MiB`);
  });
});

describe('readBody: failures', () => {
  test('corrupt gzip rejects with the zlib error', async () => {
    await assert.rejects(readBody(source(Buffer.from('this is not gzip at all')), 'gzip', MiB), { code: 'Z_DATA_ERROR' });
  });

  test('gzip cut short gives what could be decoded, as browsers do', async () => {
    const encoded = zlib.gzipSync(TEXT);
    const r = await readBody(source(encoded.subarray(0, Math.floor(encoded.length / 2))), 'gzip', 10 * MiB);
    assert.ok(r.body.length > 0 && r.body.length < TEXT.length, `${r.body.length} bytes`);
    assert.deepEqual(r.body, TEXT.subarray(0, r.body.length), 'a prefix of the real text');
  });

  test('an empty body declared as gzip is an empty body', async () => {
    const r = await readBody(source(Buffer.alloc(0)), 'gzip', MiB);
    assert.equal(r.body.length, 0);
  });

  test('corrupt br rejects', async () => {
    await assert.rejects(readBody(source(Buffer.from('this is not brotli at all')), 'br', MiB), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.match(String((err as NodeJS.ErrnoException).code), /^ERR_/);
      return true;
    });
  });

  test('data after the cap is not decoded, so corruption there does not matter', async () => {
    const encoded = zlib.gzipSync(TEXT).subarray(0, 2000);
    // Only the first 2000 compressed bytes are valid; the cap is reached before they run out.
    const r = await readBody(source(encoded, 500), 'gzip', 1000);
    assert.deepEqual(r, { body: TEXT.subarray(0, 1000), truncated: true });
  });

  test('an unsupported coding rejects with UNSUPPORTED_ENCODING, final, and the source is let go', async () => {
    for (const enc of ['compress', 'zstd', 'gzip, lzma']) {
      const src = source(TEXT);
      await assert.rejects(readBody(src, enc, MiB), (err: unknown) => {
        assert.ok(err instanceof FetchFailure);
        assert.equal(err.code, 'UNSUPPORTED_ENCODING');
        assert.equal(err.kind, 'final');
        return true;
      });
      assert.equal(src.destroyed, true, enc);
    }
  });
});
