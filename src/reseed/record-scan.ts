import fg from 'fast-glob';
import type { OfferResult } from '../frontier/admission/admission.js';
import type { Layout } from '../store/layout.js';
import { listLinksKeys, readSummaryFile, uncoveredKeys } from '../store/host-summary.js';
import { readRecord } from '../store/read-record.js';
import { asLinksRecord, type Referrer } from '../store/records.js';
import { hostDirOfNormalized } from '../url/host-dir.js';
import { isKey } from '../url/key.js';
import type { KeySet } from '../url/key-set.js';
import { LinkMemo } from '../url/link-memo.js';
import { mapLimit } from '../util/map-limit.js';
import { READ_WORKERS, RecordReadPool, type BatchResult } from './record-read-pool.js';
import type { ReseedSink, ReseedStats } from './reseed-sink.js';
import type { ScanPacer } from './scan-pacer.js';

/** Records read in parallel (each is a round trip on NFS or sshfs). */
export const READ_PARALLELISM = 32;
/** Records of one scan read on the main thread before the rest go to worker threads. */
const POOL_AFTER = 512;
/** Records of one directory in one batch for a worker. */
const BATCH = 32;
/** links/<host> directories listed at once in a scan (as many as there are reader threads). */
const LIST_PARALLELISM = READ_WORKERS;

/** Records of one links/<host> directory for one reader thread. */
interface Batch {
  readonly hostDir: string;
  readonly read: KeySet;
  readonly keys: string[];
}

export interface ScanOptions {
  readonly layout: Layout;
  readonly sink: ReseedSink;
  /** Counts the records read and the URLs queued. */
  readonly stats: ReseedStats;
  /** Reads every record, those read before too. */
  readonly full: boolean;
  /** Takes a host's summary for the records it covers when the scan would read them all (docs/protocol.md, "Host summaries"). */
  readonly summaries: boolean;
  /** The records of a directory whose links were all taken into account (the scan adds to it). */
  readOf(hostDir: string): KeySet;
  /** Lets the crawl run between slices of the scan's work (scan-pacer.ts). */
  readonly pacer?: ScanPacer | undefined;
}

/**
 * One scan of a reseed (Reseeder): lists the links/<host> directories `hostDirs` and offers
 * the links of each record not read before to the sink. Returns the directories some of whose
 * links did not fit in the frontier (they are read again next time); throws the first failure
 * of the mount, once every read in flight has ended.
 */
export async function scanRecords(hostDirs: readonly string[], o: ScanOptions): Promise<Set<string>> {
  const incomplete = new Set<string>();
  // Each distinct URL is offered once per scan (at its lowest depth), not once per mention.
  const memo = new LinkMemo();
  // Reads in flight are counted, not kept: a million records must not mean a million promises.
  let inFlight = 0;
  let failure: { error: unknown } | undefined;
  const waiters: (() => void)[] = [];
  const changed = (): Promise<void> => new Promise<void>((resolve) => waiters.push(resolve));
  const wakeAll = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  const below = async (n: number): Promise<void> => {
    while (inFlight >= n) await changed();
  };
  // A big scan (the first one of a node, or after gaining hosts) reads its records in
  // worker threads, with synchronous reads (record-read-pool.ts); a small one stays here.
  let pool: RecordReadPool | undefined;
  let scanned = 0;
  // The threads read the real file system: on another one (Mount.native false) every record is read here.
  const threads = o.layout.mount.native;
  const flush = async (b: Batch): Promise<void> => {
    pool ??= new RecordReadPool();
    const p = pool;
    while (!p.hasRoom(b.hostDir)) {
      if (failure !== undefined) return;
      await changed();
    }
    inFlight++;
    p.read(b.hostDir, `${o.layout.dir('links')}/${b.hostDir}`, b.keys)
      .then(
        (r) => takeBatch(b, r, o, memo, incomplete, (error) => (failure ??= { error })),
        (error: unknown) => {
          failure ??= { error };
          incomplete.add(b.hostDir);
        },
      )
      .finally(() => {
        inFlight--;
        wakeAll();
      });
  };
  /** Lists one links/<host> directory and reads the records not read before. */
  const scanDir = async (hostDir: string): Promise<void> => {
    await o.sink.hostLoaded?.(hostDir);
    const read = o.readOf(hostDir);
    let batch: Batch | undefined;
    try {
      const fromSummary = o.summaries && (o.full || read.size === 0) ? await summaryEntries(hostDir, read, o, memo, incomplete) : undefined;
      for await (const entry of fromSummary ?? recordEntries(o.layout, hostDir)) {
        if (failure !== undefined) return;
        if (o.pacer?.due()) await o.pacer.pause();
        const key = entry.slice(hostDir.length + 1, -5);
        if (!isKey(key)) continue;
        if (!o.full && read.has(key)) continue;
        if (++scanned > POOL_AFTER && threads) {
          if (batch !== undefined && batch.keys.length >= BATCH) await flush(batch);
          if (batch === undefined || batch.keys.length >= BATCH) batch = { hostDir, read, keys: [] };
          batch.keys.push(key);
          continue;
        }
        await below(READ_PARALLELISM);
        inFlight++;
        readLinksOf(hostDir, key, o, memo)
          .then(
            (complete) => {
              if (complete) read.add(key);
              else incomplete.add(hostDir);
            },
            (error: unknown) => {
              failure ??= { error };
              incomplete.add(hostDir);
            },
          )
          .finally(() => {
            inFlight--;
            wakeAll();
          });
      }
      if (batch !== undefined && failure === undefined) await flush(batch);
    } finally {
      pool?.release(hostDir);
    }
  };
  try {
    // Several directories at once: a host's records go to one reader thread (its memory
    // of links sent works per host), so one directory at a time would keep one thread busy.
    await mapLimit(hostDirs, LIST_PARALLELISM, (hostDir) => scanDir(hostDir));
  } catch (error) {
    failure ??= { error };
  } finally {
    await below(1);
    await pool?.close();
  }
  if (failure !== undefined) throw failure.error;
  return incomplete;
}

/**
 * The records of links/<hostDir>, as `<hostDir>/<name>.json`. On the real file system
 * fast-glob streams the directory: its listing is never held whole, and reads start while the
 * listing goes on; on another one, its MountFs lists it. A missing directory has none.
 */
function recordEntries(layout: Layout, hostDir: string): AsyncIterable<string> {
  if (!layout.mount.native) return listedEntries(layout, hostDir);
  const stream = fg.stream(`${fg.escapePath(hostDir)}/*.json`, { cwd: layout.dir('links'), onlyFiles: true, dot: false, unique: false });
  return stream as AsyncIterable<string>;
}

/** recordEntries through the MountFs: one listing. */
async function* listedEntries(layout: Layout, hostDir: string): AsyncIterable<string> {
  let names: string[];
  try {
    names = await layout.fs.readdir(layout.hostDir('links', hostDir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const name of names) if (name.endsWith('.json') && !name.startsWith('.')) yield `${hostDir}/${name}`;
}

/**
 * Offers the links of a host's summary, when it has one that the listing of links/<host>
 * does not contradict (host-summary.ts, uncoveredKeys), and marks its pages read; returns
 * the records it does not cover, as recordEntries names them. Undefined: no usable summary.
 */
async function summaryEntries(
  hostDir: string,
  read: KeySet,
  o: ScanOptions,
  memo: LinkMemo,
  incomplete: Set<string>,
): Promise<string[] | undefined> {
  const summary = await readSummaryFile(o.layout, hostDir);
  if (summary === undefined) return undefined;
  const missing = uncoveredKeys(
    summary.pages.map((p) => p[0]),
    await listLinksKeys(o.layout, hostDir),
  );
  if (missing === undefined) return undefined;
  o.stats.summariesRead++;
  let complete = true;
  const referrers = summary.pages.map(([, url, depth]) => ({ url, depth }));
  for (const [link, i] of summary.links) {
    const referrer = referrers[i]!;
    // A summary names each link once, and the host's links are read from no other summary:
    // those need no memo (at ten million URLs it was the largest structure of a reseed).
    const offered = offerLinks([link], referrer.depth + 1, o, memo, referrer, hostDir);
    if (!(typeof offered === 'boolean' ? offered : await offered)) complete = false;
    if (o.pacer?.due()) await o.pacer.pause();
  }
  if (complete) for (const page of summary.pages) read.add(page[0]);
  else incomplete.add(hostDir);
  return missing.map((key) => `${hostDir}/${key}.json`);
}

/** Offers the links of one record; false when some did not fit in the frontier. */
async function readLinksOf(hostDir: string, key: string, o: ScanOptions, memo: LinkMemo): Promise<boolean> {
  // Absent or torn: nothing to take from it. Anything else is the mount failing (thrown):
  // the caller's fault handling decides, and the record is read again.
  const read = await readRecord(o.layout.mount, o.layout.links(hostDir, key), asLinksRecord);
  if (read.kind !== 'value') return true;
  const record = read.value;
  o.stats.recordsRead++;
  return offerLinks(record.links, record.depth + 1, o, memo, { url: record.url, depth: record.depth });
}

/**
 * Offers the links of one record; false when some did not fit in the frontier. Synchronous
 * unless an offer is (a --hook priority makes it async): then the rest are awaited in turn.
 * Links to `unique` (the host of a summary, whose links it names once) skip the memo.
 */
function offerLinks(
  links: readonly unknown[],
  depth: number,
  o: ScanOptions,
  memo: LinkMemo,
  referrer?: Referrer,
  unique?: string,
): boolean | Promise<boolean> {
  const { sink, stats } = o;
  let complete = true;
  const offer = (link: unknown): OfferResult | Promise<OfferResult> | undefined => {
    if (typeof link !== 'string') return undefined;
    const target = hostDirOfNormalized(link);
    if (target === undefined || !sink.wantsHost(target) || (target !== unique && !memo.first(link, depth))) return undefined;
    return sink.offer(link, target, depth, referrer);
  };
  const count = (r: OfferResult): void => {
    if (r === 'queued') stats.queued++;
    else if (r === 'full') complete = false;
  };
  for (let i = 0; i < links.length; i++) {
    const offered = offer(links[i]);
    if (offered === undefined) continue;
    if (typeof offered === 'string') {
      count(offered);
      continue;
    }
    return (async () => {
      count(await offered);
      for (const rest of links.slice(i + 1)) {
        const r = offer(rest);
        if (r !== undefined) count(await r);
      }
      return complete;
    })();
  }
  return complete;
}

/** Takes what a worker read of a batch of records, as readRecord does for one. */
async function takeBatch(
  b: Batch,
  r: BatchResult,
  o: ScanOptions,
  memo: LinkMemo,
  incomplete: Set<string>,
  fail: (error: unknown) => void,
): Promise<void> {
  for (let i = 0; i < r.results.length; i++) {
    const res = r.results[i]!;
    const key = b.keys[i]!;
    if (res.outcome === 'skip') {
      b.read.add(key);
    } else if (res.outcome === 'error') {
      fail(Object.assign(new Error(res.message), res.code === undefined ? {} : { code: res.code }));
      incomplete.add(b.hostDir);
    } else {
      o.stats.recordsRead++;
      const offered = offerLinks(res.links, res.depth, o, memo, { url: res.url, depth: res.depth - 1 });
      if (typeof offered === 'boolean' ? offered : await offered) b.read.add(key);
      else incomplete.add(b.hostDir);
      if (o.pacer?.due(res.links.length)) await o.pacer.pause();
    }
  }
}
