import { open } from 'node:fs/promises';
import zlib from 'node:zlib';

/** One complete record of a record-per-member gzipped WARC file. */
export interface ReadRecord {
  /** Offset of its gzip member in the file. */
  readonly offset: number;
  /** Length of its gzip member. */
  readonly length: number;
  /** WARC header fields, names lowercased (the first value of a repeated one). */
  readonly headers: ReadonlyMap<string, string>;
  /** The record block (Content-Length bytes). */
  readonly block: Buffer;
}

const FHCRC = 2;
const FEXTRA = 4;
const FNAME = 8;
const FCOMMENT = 16;
const READ_CHUNK = 4 * 1024 * 1024;

/** Length of the gzip header at `at`, or undefined when more bytes are needed; throws when it is not one. */
function gzipHeaderLength(buf: Buffer, at: number): number | undefined {
  if (buf.length - at < 10) return undefined;
  if (buf[at] !== 0x1f || buf[at + 1] !== 0x8b || buf[at + 2] !== 8) throw new Error('not a gzip member');
  const flags = buf[at + 3]!;
  let p = at + 10;
  if (flags & FEXTRA) {
    if (buf.length < p + 2) return undefined;
    p += 2 + buf.readUInt16LE(p);
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (flags & flag) {
      const end = buf.indexOf(0, p);
      if (end < 0) return undefined;
      p = end + 1;
    }
  }
  if (flags & FHCRC) p += 2;
  return p <= buf.length ? p - at : undefined;
}

/** Splits a WARC record into its header fields and block; undefined when it is not whole. */
export function splitRecord(data: Buffer): { headers: Map<string, string>; block: Buffer } | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0 || !data.subarray(0, 5).equals(Buffer.from('WARC/'))) return undefined;
  const headers = new Map<string, string>();
  for (const line of data.subarray(0, end).toString('utf8').split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  const length = Number(headers.get('content-length'));
  const blockStart = end + 4;
  // A record is its block and then CRLF CRLF.
  if (!Number.isInteger(length) || data.length !== blockStart + length + 4) return undefined;
  return { headers, block: data.subarray(blockStart, blockStart + length) };
}

/**
 * The complete records of a WARC file written one record per gzip member, in order, read
 * with memory bounded by the largest record. Stops at the first member that is cut short
 * (a writer killed mid-write) or corrupt, or whose record is not whole: `end()` then says
 * where the readable part of the file ends.
 */
export class WarcFileReader {
  #end = 0;

  constructor(readonly path: string) {}

  /** Offset just past the last complete record seen so far. */
  get end(): number {
    return this.#end;
  }

  async *records(): AsyncGenerator<ReadRecord> {
    const fh = await open(this.path, 'r');
    try {
      let window = Buffer.alloc(0);
      let windowStart = 0;
      let eof = false;
      let want = READ_CHUNK;
      const more = async (): Promise<void> => {
        const chunk = Buffer.allocUnsafe(want);
        const { bytesRead } = await fh.read(chunk, 0, want, windowStart + window.length);
        if (bytesRead === 0) eof = true;
        window = Buffer.concat([window, chunk.subarray(0, bytesRead)]);
      };
      for (;;) {
        const rel = this.#end - windowStart;
        if (rel > 0) {
          window = window.subarray(rel);
          windowStart = this.#end;
        }
        if (window.length === 0) {
          if (eof) return;
          await more();
          continue;
        }
        const member = this.#member(window);
        if (member === 'more') {
          if (eof) return; // cut short: the rest is a torn record
          want = Math.max(want, window.length);
          await more();
          continue;
        }
        if (member === undefined) return;
        const parts = splitRecord(member.data);
        if (parts === undefined) return;
        yield { offset: windowStart, length: member.length, headers: parts.headers, block: parts.block };
        this.#end = windowStart + member.length;
      }
    } finally {
      await fh.close();
    }
  }

  /** The member at the start of `buf`: 'more' when cut short here, undefined when corrupt. */
  #member(buf: Buffer): { data: Buffer; length: number } | 'more' | undefined {
    let header: number | undefined;
    try {
      header = gzipHeaderLength(buf, 0);
    } catch {
      return undefined;
    }
    if (header === undefined) return 'more';
    let data: Buffer;
    let consumed: number;
    try {
      const r = zlib.inflateRawSync(buf.subarray(header), { info: true }) as unknown as {
        buffer: Buffer;
        engine: { bytesWritten: number };
      };
      data = r.buffer;
      consumed = r.engine.bytesWritten;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'Z_BUF_ERROR' ? 'more' : undefined;
    }
    const trailer = header + consumed;
    if (buf.length < trailer + 8) return 'more';
    if (buf.readUInt32LE(trailer) !== zlib.crc32(data) || buf.readUInt32LE(trailer + 4) !== data.length % 2 ** 32) return undefined;
    return { data, length: trailer + 8 };
  }
}

/** Status and media type of a response record's HTTP block. */
export function httpHead(block: Buffer): { status: number; mime: string } {
  const end = block.indexOf('\r\n\r\n');
  const lines = block
    .subarray(0, end < 0 ? Math.min(block.length, 65536) : end)
    .toString('latin1')
    .split('\r\n');
  const status = Number(lines[0]?.split(' ')[1]);
  let mime = '-';
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'content-type') {
      mime =
        line
          .slice(colon + 1)
          .split(';')[0]!
          .trim()
          .toLowerCase() || '-';
    }
  }
  return { status: Number.isInteger(status) ? status : 0, mime };
}
