import { hostname } from 'node:os';
import { mkdir, open, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import { Layout } from '../store/layout.js';
import { bootId } from '../cluster/local-liveness.js';
import { describeError } from '../errors.js';
import type { Logger } from '../progress/logger.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import { nodeMount } from '../store/mount.js';
import { CaptureDates } from './capture-dates.js';
import { cdxjLine, sortCdxj } from './cdxj.js';
import type { CaptureSink, Exchange } from './exchange.js';
import { exchangeRecords, warcinfoRecord, type BuiltRecord } from './warc-records.js';
import { repairDeadWarcs, repairLine } from './dead-writer-repair.js';
import { OPEN_SUFFIX, cdxjNameOf } from './warc-repair.js';
import { writeAt, type OpenFile } from './open-warc-file.js';

export interface WarcCaptureOptions {
  /** The warc/ directory of the data directory (created if missing; its parent never is). */
  readonly dir: string;
  readonly nodeId: string;
  /** A file is closed and a new one started before it would pass this many bytes. */
  readonly maxSize: number;
  readonly software: string;
  readonly userAgent: string;
  readonly robots: boolean;
  /** fdatasync each batch of records before its index lines are written. */
  readonly fsync: boolean;
}

/**
 * The WARC capture of one node process (docs/warc.md). The fetcher hands it every exchange
 * (`capture`, synchronous: records are built in the background); `flush` writes what was
 * captured, and the committer awaits it before a page's records, so every committed fetch is
 * in a WARC file first. Concurrent flushes share one write.
 *
 * Only this process writes its files (never O_APPEND: a file is named after its node and a
 * sequence, created exclusively, written at offsets this writer keeps), and it holds no file
 * open between writes, so a mount can turn read-only under it. A write that fails leaves a
 * torn tail that the next write cuts off; a process killed mid-write leaves a `.open` file
 * that the next node to open the directory repairs (warc-repair.ts). Index lines are written
 * only after the records they point to, so the CDXJ never points past the end of a file.
 */
export class WarcCapture implements CaptureSink {
  readonly #o: WarcCaptureOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  #pending: Promise<BuiltRecord[]>[] = [];
  #file: OpenFile | undefined;
  #last: Promise<void> = Promise.resolve();
  #next: Promise<void> | undefined;
  #repaired = false;
  #seq = 0;
  #buildErrors = 0;
  readonly #dates: CaptureDates;
  /** Records written (for the summary and tests). */
  records = 0;
  bytes = 0;

  /** The capture of a crawling node, writing under the data directory's warc/. */
  static forNode(config: CrawlConfig, clock: Clock, log: Logger): WarcCapture {
    return new WarcCapture(
      {
        dir: new Layout(config.dataDir).warc(),
        nodeId: config.nodeId,
        maxSize: config.warcMaxSize,
        software: 'mountcrawl (https://www.npmjs.com/package/mountcrawl)',
        userAgent: config.userAgent,
        robots: config.robots,
        fsync: config.fsync,
      },
      { clock, log },
    );
  }

  constructor(options: WarcCaptureOptions, deps: { clock: Clock; log: Logger }) {
    this.#o = options;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#dates = new CaptureDates(options.dir);
  }

  capture(exchange: Exchange): void {
    this.#pending.push(
      exchangeRecords(exchange, this.#dates).catch((err: unknown) => {
        if (++this.#buildErrors <= 3) this.#log.warn(`warc: record of ${exchange.url} not written: ${describeError(err)}`);
        return [];
      }),
    );
  }

  /**
   * Writes every exchange captured so far; rejects with the file system's error (the caller
   * treats it as a fault of the mount, like a failed html write).
   */
  flush(): Promise<void> {
    if (this.#next !== undefined) return this.#next;
    if (this.#pending.length === 0) return this.#last;
    const next = this.#last
      .catch(() => undefined)
      .then(() => {
        this.#next = undefined;
        return this.#write(this.#pending.splice(0));
      });
    this.#next = next;
    this.#last = next;
    return next;
  }

  /** Writes what is left, and closes the current file (renamed without `.open`). */
  async close(): Promise<void> {
    await this.flush();
    if (!this.#repaired) await this.#repairDead();
    if (this.#file !== undefined) await this.#closeFile();
  }

  async #write(batch: Promise<BuiltRecord[]>[]): Promise<void> {
    const built = (await Promise.all(batch)).flat();
    if (built.length === 0) return;
    if (!this.#repaired) await this.#repairDead();
    const total = built.reduce((n, r) => n + r.bytes.length, 0);
    if (this.#file !== undefined && this.#file.records > 0 && this.#file.size + total > this.#o.maxSize) await this.#closeFile();
    const data = Buffer.concat(
      built.map((r) => r.bytes),
      total,
    );
    let f = this.#file ?? (await this.#newFile());
    // A file taken by a repairer before or during this write: the batch goes to a new file
    // (a copy may also be in the taken file; a record twice is harmless, a record lost is not).
    while (
      (await writeAt(f.path, data, f, 'warc', this.#o.fsync).then(
        () => false,
        (err) => this.#takenOr(f, err),
      )) ||
      (await this.#taken(f))
    ) {
      f = await this.#newFile();
    }
    const start = f.size - total;
    let offset = start;
    for (const r of built) {
      if (r.type === 'response' || r.type === 'revisit') {
        f.cdxPending += cdxjLine({
          url: r.url,
          surt: r.surt,
          date: r.date,
          status: r.status,
          mime: r.mime,
          digest: r.payloadDigest,
          offset,
          length: r.bytes.length,
          filename: f.name,
        });
      }
      offset += r.bytes.length;
    }
    f.records += built.length;
    this.records += built.length;
    this.bytes += total;
    const lines = Buffer.from(f.cdxPending);
    await writeAt(f.cdxPath, lines, f, 'cdx', this.#o.fsync);
    f.cdxPending = '';
  }

  /** True when `err` (of a write to `f`) is because `f` was taken by a repairer; else rethrows it. */
  async #takenOr(f: OpenFile, err: unknown): Promise<boolean> {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (await this.#taken(f))) return true;
    throw err;
  }

  /** Starts a file: `<UTC time>-<node>-<seq>.warc.gz.open`, its warcinfo record, and its index. */
  async #newFile(): Promise<OpenFile> {
    await mkdir(this.#o.dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    for (;;) {
      const stamp = new Date(this.#clock.now()).toISOString().replace(/[^0-9]/g, '');
      const name = `${stamp}-${this.#o.nodeId}-${String(this.#seq++).padStart(5, '0')}.warc.gz`;
      const info = await warcinfoRecord(
        name,
        {
          software: this.#o.software,
          format: 'WARC File Format 1.1',
          conformsTo: 'https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/',
          'http-header-user-agent': this.#o.userAgent,
          robots: this.#o.robots ? 'obey' : 'ignore',
          hostname: hostname(),
          'mountcrawl-node': this.#o.nodeId,
          'mountcrawl-pid': String(process.pid),
          'mountcrawl-boot-id': bootId(),
          'payload-note': 'response payloads are stored decoded; X-Archive-Orig-* keep the headers as received',
        },
        this.#clock.now(),
      );
      const path = join(this.#o.dir, `${name}${OPEN_SUFFIX}`);
      let fh;
      try {
        fh = await open(path, 'wx');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      try {
        await fh.write(info.bytes, 0, info.bytes.length, 0);
      } finally {
        await fh.close();
      }
      const cdxPath = join(this.#o.dir, cdxjNameOf(name));
      await (await open(cdxPath, 'w')).close();
      this.#file = { name, path, cdxPath, size: info.bytes.length, cdxSize: 0, records: 0, dirty: false, cdxDirty: false, cdxPending: '' };
      return this.#file;
    }
  }

  async #closeFile(): Promise<void> {
    const f = this.#file!;
    try {
      if (f.dirty || f.cdxDirty || f.cdxPending !== '') {
        // Cut a torn tail and write the index lines still owed, then close.
        await writeAt(f.path, Buffer.alloc(0), f, 'warc', this.#o.fsync);
        await writeAt(f.cdxPath, Buffer.from(f.cdxPending), f, 'cdx', this.#o.fsync);
        f.cdxPending = '';
      }
      // The index as written (in record order) is replaced whole by the sorted one; a crash
      // before the WARC's own rename leaves a `.open` file, whose repair writes it again.
      const lines = await readFile(f.cdxPath, 'utf8');
      await writeFileAtomic(nodeMount, f.cdxPath, sortCdxj(lines), { nodeId: this.#o.nodeId, fsync: this.#o.fsync });
      await rename(f.path, join(this.#o.dir, f.name));
    } catch (err) {
      if (!(await this.#takenOr(f, err))) throw err;
    }
    this.#file = undefined;
  }

  /**
   * Closes the `.open` files of writers known dead without watching heartbeats (killed on
   * this machine, or an earlier run of this node id); the heartbeat closes those of nodes
   * that died elsewhere (dead-writer-repair.ts).
   */
  async #repairDead(): Promise<void> {
    this.#repaired = true;
    for (const r of await repairDeadWarcs(this.#o.dir, this.#o.nodeId, undefined)) this.#log.warn(repairLine(r));
  }

  /**
   * True when the current file was taken from this writer: another node counted this one dead
   * (its heartbeat did not get through for --dead-after) and claimed the file for repair
   * (docs/warc.md). Its records written so far are kept there; the writer goes on in a new
   * file. False when the directory itself is gone (a mount fault, reported as such).
   */
  async #taken(f: OpenFile): Promise<boolean> {
    try {
      await stat(f.path);
      return false;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    await stat(this.#o.dir); // throws when the mount is gone
    if (this.#file === f) {
      this.#file = undefined;
      this.#log.warn(`warc: ${f.name} was closed by another node that counted this one dead; writing on in a new file`);
    }
    return true;
  }
}
