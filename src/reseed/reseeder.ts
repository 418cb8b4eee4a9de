import { readdir, stat } from 'node:fs/promises';
import fg from 'fast-glob';
import type { Clock } from '../config/clock.js';
import type { OfferResult } from '../frontier/admission/admission.js';
import type { Layout } from '../store/layout.js';
import { readJsonValidated, readWhole } from '../store/read-whole.js';
import { asLinksRecord } from '../store/records.js';
import { hostDirOfNormalized, isSafeHostDir } from '../url/host-dir.js';
import { isKey } from '../url/key.js';
import { KeySet } from '../url/key-set.js';
import { LinkMemo } from '../url/link-memo.js';
import { mapLimit } from '../util/map-limit.js';
import { READ_WORKERS, RecordReadPool, type BatchResult } from './record-read-pool.js';

/** Records of one links/<host> directory for one reader thread. */
interface Batch {
  readonly hostDir: string;
  readonly dir: DirState;
  readonly keys: string[];
}

/** What the reseeder hands links to. */
export interface ReseedSink {
  /** Cheap first filter: does this node crawl this host at all (scope and ownership)? */
  wantsHost(hostDir: string): boolean;
  /** Called with the wanted hosts that have files on the mount, before any offer. */
  prepareHosts(hostDirs: readonly string[]): Promise<void>;
  /** A seed found in seeds/: widens the scope; returns its normalized form, if it is usable. */
  addSeed(raw: string): { url: string; hostDir: string } | undefined;
  /**
   * A candidate URL. `queued`: now in the frontier; `known`: done, queued or filtered, nothing
   * more to do; `full`: the frontier is full, so the record must be read again next time.
   */
  offer(url: string, hostDir: string, depth: number): OfferResult | Promise<OfferResult>;
  /** A wanted host that a node which left done had (docs/protocol.md, "Leaving done"): a reseed that is not full neither adopts it nor reads its records. */
  quiet?(hostDir: string): boolean;
}

/**
 * Which links/<host> directories a reseed that is not full looks at (docs/protocol.md,
 * "Rounds, reseeds and the end of the crawl"): `all` (without hand-offs: a link reaches its
 * owner only through the records), `own` (with hand-offs: the hosts this node wants, each
 * directory with one stat), `own-unsettled` (with hand-offs, while the crawl cannot end with
 * this reseed: only the directories this node has a reason to look at, with no stat of the
 * others; under host leases only a host's owner writes into its directory).
 */
export type ReseedScope = 'all' | 'own' | 'own-unsettled';

/** What one reseed did. */
export interface ReseedStats {
  queued: number;
  recordsRead: number;
  dirsListed: number;
  dirsSkipped: number;
  seedsRead: number;
  durationMs: number;
}

/** A links/<host> directory as last scanned. */
interface DirState {
  /** mtime at the last listing, when that listing is known to be complete. */
  settledMtimeMs: number | undefined;
  /** Records whose links were all taken into account (one per record: a KeySet keeps it small). */
  readonly read: KeySet;
}

/** Records read in parallel (each is a round trip on NFS or sshfs). */
const READ_PARALLELISM = 32;
/** Records of one scan read on the main thread before the rest go to worker threads. */
const POOL_AFTER = 512;
/** Records of one directory in one batch for a worker. */
const BATCH = 32;
/** links/<host> directories listed at once in a scan (as many as there are reader threads). */
const LIST_PARALLELISM = READ_WORKERS;
/** Directory stats in parallel. */
const STAT_PARALLELISM = 32;
/** A directory mtime at least this much older than the mount's clock cannot hide a new entry. */
const MTIME_SLACK_MS = 2000;

/**
 * Finds work on the mount when the frontier empties (docs/protocol.md, "Rounds, reseeds and the end of the crawl"): seeds, then the links of
 * every links record not read before. Incremental: a links/<host> directory whose mtime has
 * not changed since a complete listing is skipped with one stat, and a listed directory
 * only has its new records read, so a reseed costs in proportion to what is new.
 *
 * mtime granularity is one second over sshfs: a directory is only "settled" when its mtime
 * is well before the mount's clock at the time of listing (from the mtime the server gave
 * this node's heartbeat file), so an entry added in the same second is never missed.
 */
export class Reseeder {
  readonly #layout: Layout;
  readonly #serverTime: () => { mtimeMs: number } | undefined;
  readonly #clock: Clock;
  readonly #dirs = new Map<string, DirState>();
  readonly #seedsRead = new Set<string>();

  constructor(layout: Layout, deps: { clock: Clock; serverTime: () => { mtimeMs: number } | undefined }) {
    this.#layout = layout;
    this.#clock = deps.clock;
    this.#serverTime = deps.serverTime;
  }

  /** Notes that this node wrote a record and already took all its links into account. */
  markRead(hostDir: string, key: string): void {
    this.#dir(hostDir).read.add(key);
  }

  /**
   * The directory may hold records not read (this node wrote one whose links did not all
   * fit in its frontier, or it let the host go and another node may write there): the next
   * reseed lists it, whatever its scope.
   */
  unsettle(hostDir: string): void {
    this.#dir(hostDir).settledMtimeMs = undefined;
  }

  #dir(hostDir: string): DirState {
    let d = this.#dirs.get(hostDir);
    if (d === undefined) {
      d = { settledMtimeMs: undefined, read: new KeySet() };
      this.#dirs.set(hostDir, d);
    }
    return d;
  }

  /**
   * Reads seeds and links records into `sink`. `full` ignores what was read before (after
   * this node gained hosts, whose links it skipped while another node owned them).
   * `scope` (ReseedScope): with hand-offs, unless `full`, only the links records of hosts
   * this node wants are read (those whose links did not fit in the frontier); links to its
   * hosts from other hosts' records reach it in hand-off files.
   */
  async reseed(sink: ReseedSink, full: boolean, scope: ReseedScope = 'all'): Promise<ReseedStats> {
    const started = this.#clock.monotonic();
    const stats: ReseedStats = { queued: 0, recordsRead: 0, dirsListed: 0, dirsSkipped: 0, seedsRead: 0, durationMs: 0 };
    const serverNow = this.#serverTime()?.mtimeMs;
    // Seeds first: they set the scope that decides which hosts are wanted. A full reseed
    // (hosts gained) offers them again: one of them may belong to a gained host.
    if (full) this.#seedsRead.clear();
    const seeds = await this.#readSeeds(sink, stats);

    const [linkHosts, errHosts] = await Promise.all([this.#hostDirs('links'), this.#hostDirs('errs')]);
    const owned = (h: string): boolean => sink.wantsHost(h) && (full || sink.quiet?.(h) !== true);
    const wanted = [...new Set([...linkHosts, ...errHosts])].filter(owned);
    await sink.prepareHosts(wanted);
    for (const seed of seeds) {
      const offered = sink.wantsHost(seed.hostDir) ? sink.offer(seed.url, seed.hostDir, 0) : 'known';
      const r = typeof offered === 'string' ? offered : await offered;
      if (r === 'queued') stats.queued++;
      if (r !== 'full') this.#seedsRead.add(seed.name);
    }

    const toList: { hostDir: string; mtimeMs: number }[] = [];
    const scan =
      full || scope === 'all'
        ? linkHosts
        : linkHosts.filter((h) => owned(h) && (scope === 'own' || this.#dirs.get(h)?.settledMtimeMs === undefined));
    await mapLimit(scan, STAT_PARALLELISM, async (hostDir) => {
      let mtimeMs: number;
      try {
        mtimeMs = (await stat(`${this.#layout.dir('links')}/${hostDir}`)).mtimeMs;
      } catch {
        return;
      }
      if (!full && this.#dirs.get(hostDir)?.settledMtimeMs === mtimeMs) {
        stats.dirsSkipped++;
        return;
      }
      toList.push({ hostDir, mtimeMs });
    });
    if (toList.length === 0) {
      stats.durationMs = Math.round(this.#clock.monotonic() - started);
      return stats;
    }

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
    const flush = async (b: Batch): Promise<void> => {
      pool ??= new RecordReadPool();
      const p = pool;
      while (!p.hasRoom(b.hostDir)) {
        if (failure !== undefined) return;
        await changed();
      }
      inFlight++;
      p.read(b.hostDir, `${this.#layout.dir('links')}/${b.hostDir}`, b.keys)
        .then(
          (r) => this.#takeBatch(b, r, sink, stats, memo, incomplete, (error) => (failure ??= { error })),
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
      const dir = this.#dir(hostDir);
      // fast-glob streams the directory: its listing is never held whole, and reads start
      // while the listing goes on.
      const stream = fg.stream(`${fg.escapePath(hostDir)}/*.json`, { cwd: this.#layout.dir('links'), onlyFiles: true, dot: false, unique: false });
      let batch: Batch | undefined;
      try {
        for await (const entry of stream as AsyncIterable<string>) {
          if (failure !== undefined) return;
          const key = entry.slice(hostDir.length + 1, -5);
          if (!isKey(key)) continue;
          if (!full && dir.read.has(key)) continue;
          if (++scanned > POOL_AFTER) {
            if (batch !== undefined && batch.keys.length >= BATCH) await flush(batch);
            if (batch === undefined || batch.keys.length >= BATCH) batch = { hostDir, dir, keys: [] };
            batch.keys.push(key);
            continue;
          }
          await below(READ_PARALLELISM);
          inFlight++;
          this.#readRecord(hostDir, key, sink, stats, memo)
            .then(
              (complete) => {
                if (complete) dir.read.add(key);
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
      await mapLimit(toList, LIST_PARALLELISM, (d) => scanDir(d.hostDir));
    } catch (error) {
      failure ??= { error };
    } finally {
      await below(1);
      await pool?.close();
    }
    if (failure !== undefined) throw failure.error;
    for (const { hostDir, mtimeMs } of toList) {
      stats.dirsListed++;
      const settled = serverNow !== undefined && mtimeMs + MTIME_SLACK_MS <= serverNow && !incomplete.has(hostDir);
      this.#dir(hostDir).settledMtimeMs = settled ? mtimeMs : undefined;
    }
    stats.durationMs = Math.round(this.#clock.monotonic() - started);
    return stats;
  }

  /** Offers the links of one record; false when some did not fit in the frontier. */
  async #readRecord(hostDir: string, key: string, sink: ReseedSink, stats: ReseedStats, memo: LinkMemo): Promise<boolean> {
    let record;
    try {
      record = await readJsonValidated(this.#layout.links(hostDir, key), asLinksRecord);
    } catch (err) {
      // Gone, or not a record even after rereads: nothing to take from it. Anything else is
      // the mount failing: the caller's fault handling decides, and the record is read again.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError || err instanceof TypeError) return true;
      throw err;
    }
    stats.recordsRead++;
    return this.#offerLinks(record.links, record.depth + 1, sink, stats, memo);
  }

  /**
   * Offers the links of one record; false when some did not fit in the frontier. Synchronous
   * unless an offer is (a --hook priority makes it async): then the rest are awaited in turn.
   */
  #offerLinks(links: readonly unknown[], depth: number, sink: ReseedSink, stats: ReseedStats, memo: LinkMemo): boolean | Promise<boolean> {
    let complete = true;
    const offer = (link: unknown): OfferResult | Promise<OfferResult> | undefined => {
      if (typeof link !== 'string') return undefined;
      const target = hostDirOfNormalized(link);
      if (target === undefined || !sink.wantsHost(target) || !memo.first(link, depth)) return undefined;
      return sink.offer(link, target, depth);
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

  /** Takes what a worker read of a batch of records, as #readRecord does for one. */
  async #takeBatch(
    b: Batch,
    r: BatchResult,
    sink: ReseedSink,
    stats: ReseedStats,
    memo: LinkMemo,
    incomplete: Set<string>,
    fail: (error: unknown) => void,
  ): Promise<void> {
    for (let i = 0; i < r.results.length; i++) {
      const res = r.results[i]!;
      const key = b.keys[i]!;
      if (res.outcome === 'skip') {
        b.dir.read.add(key);
      } else if (res.outcome === 'error') {
        fail(Object.assign(new Error(res.message), res.code === undefined ? {} : { code: res.code }));
        incomplete.add(b.hostDir);
      } else {
        stats.recordsRead++;
        const offered = this.#offerLinks(res.links, res.depth, sink, stats, memo);
        if (typeof offered === 'boolean' ? offered : await offered) b.dir.read.add(key);
        else incomplete.add(b.hostDir);
      }
    }
  }

  /** Reads seed files not taken yet; each widens the scope at once. */
  async #readSeeds(sink: ReseedSink, stats: ReseedStats): Promise<{ name: string; url: string; hostDir: string }[]> {
    let names: string[];
    try {
      names = await readdir(this.#layout.dir('seeds'));
    } catch {
      return [];
    }
    const seeds: { name: string; url: string; hostDir: string }[] = [];
    const fresh = names.filter((name) => name.endsWith('.url') && !this.#seedsRead.has(name));
    // Read in parallel (a round trip each on a network mount), taken in listing order.
    const raws = new Map<string, string>();
    await mapLimit(fresh, READ_PARALLELISM, async (name) => {
      await readWhole(`${this.#layout.dir('seeds')}/${name}`).then(
        (b) => void raws.set(name, b.toString('utf8').trim()),
        () => undefined,
      );
    });
    for (const name of fresh) {
      const raw = raws.get(name);
      if (raw === undefined) continue;
      stats.seedsRead++;
      const seed = sink.addSeed(raw);
      if (seed === undefined) this.#seedsRead.add(name);
      else seeds.push({ name, ...seed });
    }
    return seeds;
  }

  async #hostDirs(kind: 'links' | 'errs'): Promise<string[]> {
    try {
      return (await readdir(this.#layout.dir(kind))).filter(isSafeHostDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}
