import { closeSync, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import type { QueueItem } from './host-queue.js';

/**
 * Bytes gathered before one write, and read at once: about 60 URLs, the order of a host's head
 * in memory (SPILL_HEAD), so that neither a thousand hosts' pending lines nor a read taken
 * back grow the node's memory much beyond --frontier-memory (docs/protocol.md, "Memory").
 */
const CHUNK = 8 * 1024;

/**
 * The tail of one host's queue, in a file of this machine (docs/protocol.md, "Memory"): items
 * appended in order, one JSON line each, and taken back in the same order, a read of up to
 * CHUNK at a time. Calls are synchronous: the file is local and each is one small write or
 * read, which costs less than handing it to the thread pool.
 *
 * The file is this node's alone and never the truth: every URL in it is also a link of a
 * record on the mount (or a seed or a sitemap entry), so a node killed with a spill file loses
 * nothing; the next node's reseed queues those URLs again from the mount.
 */
export class SpillFile {
  readonly path: string;
  readonly #onClose: (() => void) | undefined;
  #fd: number | undefined;
  /** Lines appended and not yet written. */
  #pending: string[] = [];
  #pendingBytes = 0;
  /** Bytes in the file, and bytes of it taken back. */
  #written = 0;
  #readAt = 0;
  #length = 0;

  /** `onClose`: called once the file is closed (SpillRoom keeps count). */
  constructor(path: string, onClose?: () => void) {
    this.path = path;
    this.#onClose = onClose;
  }

  /** Items waiting in the file (written or not yet). */
  get length(): number {
    return this.#length;
  }

  append(item: QueueItem): void {
    const line = `${JSON.stringify(encode(item))}\n`;
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    this.#length++;
    if (this.#pendingBytes >= CHUNK) this.#flush();
  }

  /** The next items in the order they were appended: those of one read, at least one while any wait. */
  take(): QueueItem[] {
    if (this.#length === 0) return [];
    if (this.#readAt === this.#written) {
      // Everything written was taken: the lines not written yet come straight from memory.
      const lines = this.#pending;
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#length -= lines.length;
      this.#rewind();
      return lines.map(decode);
    }
    const available = this.#written - this.#readAt;
    let size = Math.min(CHUNK, available);
    let buf: Buffer;
    let end: number;
    // Each line ends with a newline; a read without one (a line longer than CHUNK) reads more.
    for (;;) {
      buf = this.#read(size);
      end = buf.lastIndexOf(10);
      if (end >= 0) break;
      size = Math.min(2 * size, available);
    }
    const items = buf.toString('utf8', 0, end).split('\n').map(decode);
    this.#readAt += end + 1;
    this.#length -= items.length;
    if (this.#readAt === this.#written && this.#pending.length === 0) this.#rewind();
    return items;
  }

  /** Removes the file (the host is let go, or the node stops); the items in it are dropped. */
  close(): void {
    if (this.#fd !== undefined) {
      closeSync(this.#fd);
      this.#fd = undefined;
      try {
        unlinkSync(this.path);
      } catch {
        // Gone with its directory already.
      }
    }
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#written = this.#readAt = this.#length = 0;
    this.#onClose?.();
  }

  #flush(): void {
    this.#fd ??= openSync(this.path, 'w+');
    const buf = Buffer.from(this.#pending.join(''));
    let done = 0;
    while (done < buf.length) done += writeSync(this.#fd, buf, done, buf.length - done, this.#written + done);
    this.#written += buf.length;
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  /** `size` bytes of the file from `#readAt`. */
  #read(size: number): Buffer {
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(this.#fd!, buf, got, size - got, this.#readAt + got);
      if (n === 0) throw new Error(`spill file ${this.path} ended early`);
      got += n;
    }
    return buf;
  }

  /** Everything written was taken: the file starts again from its beginning. */
  #rewind(): void {
    if (this.#fd !== undefined && this.#written > 0) ftruncateSync(this.#fd, 0);
    this.#written = this.#readAt = 0;
  }
}

type Line = [url: string, key: string, depth: number, priority: number | null, referrerUrl?: string, referrerDepth?: number];

function encode(item: QueueItem): Line {
  const line: Line = [item.url, item.key, item.depth, item.priority ?? null];
  if (item.referrer !== undefined) line.push(item.referrer.url, item.referrer.depth);
  return line;
}

function decode(text: string): QueueItem {
  const [url, key, depth, priority, referrerUrl, referrerDepth] = JSON.parse(text) as Line;
  return {
    url,
    key,
    depth,
    ...(priority === null ? {} : { priority }),
    ...(referrerUrl === undefined ? {} : { referrer: { url: referrerUrl, depth: referrerDepth! } }),
  };
}
