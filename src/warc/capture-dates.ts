import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import zlib, { gunzipSync } from 'node:zlib';
import { cdxTimestamp } from './cdxj.js';
import { OPEN_SUFFIX } from './warc-repair.js';

/** A response line of an index: where its record is. */
interface Capture {
  readonly ts: string;
  readonly offset: number;
  readonly length: number;
}

/**
 * Indexes parsed and kept, the least recently used dropped first: a revisit looks at two files
 * per node (a 1 GiB file's index is about 35,000 lines, a few MB parsed).
 */
const CACHED_FILES = 32;

/**
 * The WARC-Date of the response record a revisit refers to (docs/warc.md, "A 304 on a
 * recrawl"), found in the `warc/` directory's indexes. The stored copy says when it was
 * committed, a few milliseconds after its response record's WARC-Date; WARC-Refers-To-Date
 * must be that WARC-Date itself (WARC 1.1, 5.13): wabac.js looks the original up at exactly
 * that time, to the millisecond.
 *
 * The record was written just before the commit, so it is in the last file each node started
 * at or before that time, or the one before it (a file rotated in between): at most two files
 * per node are read, their indexes searched for a response of the URL, and the newest
 * record's own WARC-Date read. Indexes are kept parsed (CACHED_FILES of them).
 */
export class CaptureDates {
  readonly #dir: string;
  #listing: { names: string[]; wall: number; mono: number } | undefined;
  readonly #cache = new Map<string, { byUrl: Map<string, Capture[]>; read: number; closed: boolean; ino: number }>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** The WARC-Date (ISO 8601) of the last response record of `url` at or before `notAfter`, or undefined. */
  async dateOf(url: string, notAfter: string): Promise<string | undefined> {
    const limitMs = Date.parse(notAfter);
    if (!Number.isFinite(limitMs)) return undefined;
    const names = await this.#names(limitMs);
    if (names === undefined) return undefined;
    const byNode = new Map<string, { name: string; stamp: number }[]>();
    for (const name of names) {
      const m = /^(\d{17})-(.+)-\d+\.warc\.gz(\.open)?$/.exec(name);
      if (m === null) continue;
      const stamp = stampMs(m[1]!);
      if (!(stamp <= limitMs)) continue;
      const list = byNode.get(m[2]!) ?? [];
      list.push({ name, stamp });
      byNode.set(m[2]!, list);
    }
    const limitTs = cdxTimestamp(new Date(limitMs).toISOString());
    const found: { warcName: string; capture: Capture }[] = [];
    for (const files of byNode.values()) {
      files.sort((a, b) => b.stamp - a.stamp || (a.name < b.name ? 1 : -1));
      for (const { name } of files.slice(0, 2)) {
        const closed = !name.endsWith(OPEN_SUFFIX);
        const warcName = closed ? name : name.slice(0, -OPEN_SUFFIX.length);
        for (const capture of (await this.#index(warcName, closed)).get(url) ?? []) {
          if (capture.ts <= limitTs) found.push({ warcName, capture });
        }
      }
    }
    // The newest second first; within it, the newest WARC-Date at or before the limit. A record
    // that cannot be read gives no date: an older capture is never named in its place.
    found.sort((a, b) => (a.capture.ts < b.capture.ts ? 1 : a.capture.ts > b.capture.ts ? -1 : 0));
    let best: string | undefined;
    for (const { warcName, capture } of found) {
      if (best !== undefined && capture.ts < cdxTimestamp(best)) break;
      const date = await recordDate(join(this.#dir, warcName), capture);
      if (date === undefined) return undefined;
      if (Date.parse(date) <= limitMs && (best === undefined || Date.parse(date) > Date.parse(best))) best = date;
    }
    return best;
  }

  /**
   * The names in the directory. A listing is used again for a second (a recrawl's 304s come in
   * bursts), unless the capture sought may be in a file started since it was made (its commit
   * less than LISTING_MARGIN_MS before the listing: machines' clocks differ).
   */
  async #names(limitMs: number): Promise<string[] | undefined> {
    const l = this.#listing;
    if (l !== undefined && performance.now() - l.mono < LISTING_REUSE_MS && limitMs < l.wall - LISTING_MARGIN_MS) return l.names;
    try {
      const wall = Date.now();
      const mono = performance.now();
      const names = await readdir(this.#dir);
      this.#listing = { names, wall, mono };
      return names;
    } catch {
      return undefined;
    }
  }

  /**
   * The response lines of a file's index, by URL. A closed file's index is read once; an open
   * one's grows by appending (docs/warc.md, "Sorted indexes"), so only what was added since the
   * last read is read (whole lines), until the file is closed and its index rewritten sorted.
   */
  async #index(warcName: string, closed: boolean): Promise<Map<string, Capture[]>> {
    let entry = this.#cache.get(warcName);
    if (entry !== undefined) {
      this.#cache.delete(warcName);
      if (entry.closed || !closed) this.#cache.set(warcName, entry);
      else entry = undefined; // closed since: its index was rewritten, read it again
    }
    if (entry === undefined) {
      entry = { byUrl: new Map(), read: 0, closed, ino: -1 };
      this.#cache.set(warcName, entry);
      if (this.#cache.size > CACHED_FILES) this.#cache.delete(this.#cache.keys().next().value!);
    } else if (entry.closed) {
      return entry.byUrl;
    }
    let added: Buffer;
    try {
      const fh = await open(join(this.#dir, warcName.replace(/\.warc\.gz$/, '.cdxj')), 'r');
      try {
        const { size, ino } = await fh.stat();
        if (ino !== entry.ino) {
          // A new file under the name: the index rewritten (sorted at close, or by a repair).
          entry.byUrl.clear();
          entry.read = 0;
          entry.ino = ino;
        }
        added = Buffer.alloc(Math.max(0, size - entry.read));
        if (added.length > 0) await fh.read(added, 0, added.length, entry.read);
      } finally {
        await fh.close();
      }
    } catch {
      return entry.byUrl;
    }
    // Whole lines only: the last one of an index being written may not be.
    const whole = closed ? added.length : added.lastIndexOf(0x0a) + 1;
    entry.read += whole;
    for (const line of added.subarray(0, whole).toString('utf8').split('\n')) {
      const brace = line.indexOf('{');
      if (brace < 0) continue;
      let j: Record<string, string>;
      try {
        j = JSON.parse(line.slice(brace)) as Record<string, string>;
      } catch {
        continue;
      }
      if (j.mime === 'warc/revisit' || j.url === undefined) continue;
      const list = entry.byUrl.get(j.url) ?? [];
      list.push({ ts: line.split(' ')[1] ?? '', offset: Number(j.offset), length: Number(j.length) });
      entry.byUrl.set(j.url, list);
    }
    return entry.byUrl;
  }
}

const LISTING_REUSE_MS = 1000;
const LISTING_MARGIN_MS = 10 * 60_000;

/** `yyyyMMddHHmmssSSS` (a WARC file name's start) as ms since the epoch. */
function stampMs(s: string): number {
  return Date.UTC(
    +s.slice(0, 4),
    +s.slice(4, 6) - 1,
    +s.slice(6, 8),
    +s.slice(8, 10),
    +s.slice(10, 12),
    +s.slice(12, 14),
    +s.slice(14, 17),
  );
}

/** Bytes of a record read to find its WARC headers (they come first). */
const HEAD_BYTES = 16 * 1024;

/** The WARC-Date of the record (one gzip member) at `c` in the file, closed or still open; undefined when it cannot be read. */
async function recordDate(closedPath: string, c: Capture): Promise<string | undefined> {
  for (const path of [`${closedPath}${OPEN_SUFFIX}`, closedPath]) {
    try {
      return await recordDateIn(path, c);
    } catch {
      // not under this name (closed, or not yet), or not readable
    }
  }
  return undefined;
}

async function recordDateIn(path: string, c: Capture): Promise<string | undefined> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(Math.min(c.length, HEAD_BYTES));
    const { bytesRead } = await fh.read(buf, 0, buf.length, c.offset);
    // The start of the member is enough: inflate what there is.
    const head = gunzipSync(buf.subarray(0, bytesRead), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    const end = head.indexOf('\r\n\r\n');
    const m = /\r\nWARC-Date: *([^\r\n]+)/i.exec(head.subarray(0, end < 0 ? head.length : end).toString('latin1'));
    return m?.[1]?.trim();
  } finally {
    await fh.close();
  }
}
