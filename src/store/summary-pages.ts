import { open } from 'node:fs/promises';
import { checkPages, SUMMARY_FORMAT, type SummaryFile } from './host-summary.js';
import type { Layout } from './layout.js';
import { readRecordBytes } from './read-record.js';

/**
 * Where a summary's `pages` end and its `links` begin, as writeHostSummary writes the file
 * (JSON.stringify: no spaces, `pages` before `links`). A quote inside a JSON string is always
 * escaped, so this text, which has a bare one, is never inside a URL.
 */
const LINKS_START = Buffer.from('],"links":[');
const CHUNK = 64 * 1024;

/** The start of the file at `path` up to and including LINKS_START, or the whole file when it has none. */
async function readToLinks(path: string): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    // The last bytes of the chunk before, so that the text is found across two chunks.
    let carry = Buffer.alloc(0);
    for (;;) {
      const buf = Buffer.allocUnsafe(CHUNK);
      const { bytesRead } = await file.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      chunks.push(chunk);
      total += bytesRead;
      const seen = Buffer.concat([carry, chunk]);
      const at = seen.indexOf(LINKS_START);
      if (at !== -1) return Buffer.concat(chunks, total).subarray(0, total - seen.length + at + LINKS_START.length);
      carry = seen.subarray(Math.max(0, seen.length - LINKS_START.length + 1));
    }
    return Buffer.concat(chunks, total);
  } finally {
    await file.close();
  }
}

/**
 * The `pages` of `summaries/<host>.json` (docs/protocol.md, "Host summaries"), for readers that
 * need no links (`export --fields`): on the real file system only the file's start is read,
 * up to its links (most of its bytes), which over a network mount are not fetched. Undefined
 * when the file is absent, or of another version or host, or its pages do not parse (after the
 * rereads a torn read gets): the reader then reads the records, as without a summary.
 */
export async function readSummaryPages(layout: Layout, hostDir: string): Promise<SummaryFile['pages'] | undefined> {
  const decode = (bytes: Buffer): SummaryFile['pages'] => {
    let text = bytes.toString('utf8');
    const at = text.indexOf(LINKS_START.toString());
    if (at !== -1) text = `${text.slice(0, at + 1)}}`;
    const f = JSON.parse(text) as Partial<SummaryFile> | null;
    if (f === null || typeof f !== 'object' || f.v !== SUMMARY_FORMAT || f.host !== hostDir || !Array.isArray(f.pages)) {
      throw new TypeError('not a valid host summary');
    }
    checkPages(f.pages);
    return f.pages;
  };
  const read = await readRecordBytes(layout.mount, layout.summary(hostDir), decode, layout.mount.native ? readToLinks : undefined);
  return read.kind === 'value' ? read.value : undefined;
}
