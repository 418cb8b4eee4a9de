import { readdir, stat } from 'node:fs/promises';
import fg from 'fast-glob';
import type { Clock } from '../config/clock.js';
import type { Layout } from '../store/layout.js';
import { readJsonValidated, readWhole } from '../store/read-whole.js';
import { asLinksRecord } from '../store/records.js';
import { hostDirOfNormalized, isSafeHostDir } from '../url/host-dir.js';
import { isKey } from '../url/key.js';
import { KeySet } from '../url/key-set.js';
import { mapLimit } from '../util/map-limit.js';

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
  offer(url: string, hostDir: string, depth: number): OfferResult;
}

export type OfferResult = 'queued' | 'known' | 'full';

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
   */
  async reseed(sink: ReseedSink, full: boolean): Promise<ReseedStats> {
    const started = this.#clock.monotonic();
    const stats: ReseedStats = { queued: 0, recordsRead: 0, dirsListed: 0, dirsSkipped: 0, seedsRead: 0, durationMs: 0 };
    const serverNow = this.#serverTime()?.mtimeMs;
    // Seeds first: they set the scope that decides which hosts are wanted. A full reseed
    // (hosts gained) offers them again: one of them may belong to a gained host.
    if (full) this.#seedsRead.clear();
    const seeds = await this.#readSeeds(sink, stats);

    const [linkHosts, errHosts] = await Promise.all([this.#hostDirs('links'), this.#hostDirs('errs')]);
    const wanted = [...new Set([...linkHosts, ...errHosts])].filter((h) => sink.wantsHost(h));
    await sink.prepareHosts(wanted);
    for (const seed of seeds) {
      const r = sink.wantsHost(seed.hostDir) ? sink.offer(seed.url, seed.hostDir, 0) : 'known';
      if (r === 'queued') stats.queued++;
      if (r !== 'full') this.#seedsRead.add(seed.name);
    }

    const toList: { hostDir: string; mtimeMs: number }[] = [];
    await mapLimit(linkHosts, STAT_PARALLELISM, async (hostDir) => {
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
    // Reads in flight are counted, not kept: a million records must not mean a million promises.
    let inFlight = 0;
    let failure: { error: unknown } | undefined;
    let wake: (() => void) | undefined;
    const below = async (n: number): Promise<void> => {
      while (inFlight >= n) await new Promise<void>((resolve) => (wake = resolve));
    };
    // fast-glob streams entries directory by directory: the whole links/ listing is never
    // held in memory, and reads start while the listing goes on.
    const patterns = toList.map((d) => `${fg.escapePath(d.hostDir)}/*.json`);
    const stream = fg.stream(patterns, { cwd: this.#layout.dir('links'), onlyFiles: true, dot: false, unique: false });
    for await (const entry of stream as AsyncIterable<string>) {
      if (failure !== undefined) break;
      const slash = entry.indexOf('/');
      const hostDir = entry.slice(0, slash);
      const key = entry.slice(slash + 1, -5);
      if (!isKey(key)) continue;
      const dir = this.#dir(hostDir);
      if (!full && dir.read.has(key)) continue;
      await below(READ_PARALLELISM);
      inFlight++;
      this.#readRecord(hostDir, key, sink, stats)
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
          wake?.();
          wake = undefined;
        });
    }
    await below(1);
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
  async #readRecord(hostDir: string, key: string, sink: ReseedSink, stats: ReseedStats): Promise<boolean> {
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
    let complete = true;
    const depth = record.depth + 1;
    for (const link of record.links) {
      if (typeof link !== 'string') continue;
      const target = hostDirOfNormalized(link);
      if (target === undefined || !sink.wantsHost(target)) continue;
      const r = sink.offer(link, target, depth);
      if (r === 'queued') stats.queued++;
      else if (r === 'full') complete = false;
    }
    return complete;
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
    for (const name of names) {
      if (!name.endsWith('.url') || this.#seedsRead.has(name)) continue;
      let raw: string;
      try {
        raw = (await readWhole(`${this.#layout.dir('seeds')}/${name}`)).toString('utf8').trim();
      } catch {
        continue;
      }
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
