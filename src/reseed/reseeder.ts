import type { Clock } from '../config/clock.js';
import type { Layout } from '../store/layout.js';
import { isSafeHostDir } from '../url/host-dir.js';
import { KeySet } from '../url/key-set.js';
import { mapLimit } from '../util/map-limit.js';
import { READ_PARALLELISM, scanRecords } from './record-scan.js';
import type { ReseedSink, ReseedStats } from './reseed-sink.js';
import { ScanPacer } from './scan-pacer.js';

/**
 * Which links/<host> directories a reseed that is not full looks at (docs/protocol.md,
 * "Rounds, reseeds and the end of the crawl"): `all` (without hand-offs: a link reaches its
 * owner only through the records), `own` (with hand-offs: the hosts this node wants, each
 * directory with one stat), `own-unsettled` (with hand-offs, while the crawl cannot end with
 * this reseed: only the directories this node has a reason to look at, with no stat of the
 * others; under host leases only a host's owner writes into its directory).
 */
export type ReseedScope = 'all' | 'own' | 'own-unsettled';

/** A links/<host> directory as last scanned. */
interface DirState {
  /** mtime at the last listing, when that listing is known to be complete. */
  settledMtimeMs: number | undefined;
  /** Records whose links were all taken into account (one per record: a KeySet keeps it small). */
  readonly read: KeySet;
}

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
  /** Full reseeds asked for (wantFull), and how many of those asks the last full reseed that ended answered. */
  #fullWanted = 0;
  #fullDone = 0;

  /** Host summaries are read (docs/protocol.md, "Host summaries"; not with --recrawl-after, whose records change). */
  readonly #summaries: boolean;

  constructor(layout: Layout, deps: { clock: Clock; serverTime: () => { mtimeMs: number } | undefined; summaries?: boolean }) {
    this.#layout = layout;
    this.#summaries = deps.summaries ?? true;
    this.#clock = deps.clock;
    this.#serverTime = deps.serverTime;
  }

  /** The next reseed reads every record (hosts were gained, whose links other records may name); asked until one ends. */
  wantFull(): void {
    this.#fullWanted++;
  }

  /**
   * A full reseed was asked for and none has ended since: URLs of hosts this node gained may be
   * named only by records it has not read for them (docs/protocol.md, "Lending hosts").
   */
  get fullDue(): boolean {
    return this.#fullWanted > this.#fullDone;
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
    const asked = this.#fullWanted;
    const stats: ReseedStats = { queued: 0, recordsRead: 0, summariesRead: 0, dirsListed: 0, dirsSkipped: 0, seedsRead: 0, durationMs: 0 };
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
        mtimeMs = (await this.#layout.fs.stat(`${this.#layout.dir('links')}/${hostDir}`)).mtimeMs;
      } catch {
        return;
      }
      if (!full && this.#dirs.get(hostDir)?.settledMtimeMs === mtimeMs) {
        stats.dirsSkipped++;
        return;
      }
      toList.push({ hostDir, mtimeMs });
    });
    if (toList.length === 0) return this.#ended(stats, full, asked, started);

    const incomplete = await scanRecords(
      toList.map((d) => d.hostDir),
      {
        layout: this.#layout,
        sink,
        stats,
        full,
        summaries: this.#summaries,
        readOf: (hostDir) => this.#dir(hostDir).read,
        pacer: new ScanPacer(this.#clock, () => sink.saturated?.() ?? false),
      },
    );
    for (const { hostDir, mtimeMs } of toList) {
      stats.dirsListed++;
      const settled = serverNow !== undefined && mtimeMs + MTIME_SLACK_MS <= serverNow && !incomplete.has(hostDir);
      this.#dir(hostDir).settledMtimeMs = settled ? mtimeMs : undefined;
    }
    return this.#ended(stats, full, asked, started);
  }

  /** A reseed ended without an error: a full one answers the asks made before it began. */
  #ended(stats: ReseedStats, full: boolean, asked: number, started: number): ReseedStats {
    if (full) this.#fullDone = Math.max(this.#fullDone, asked);
    stats.durationMs = Math.round(this.#clock.monotonic() - started);
    return stats;
  }

  /** Reads seed files not taken yet; each widens the scope at once. */
  async #readSeeds(sink: ReseedSink, stats: ReseedStats): Promise<{ name: string; url: string; hostDir: string }[]> {
    let names: string[];
    try {
      names = await this.#layout.fs.readdir(this.#layout.dir('seeds'));
    } catch {
      return [];
    }
    const seeds: { name: string; url: string; hostDir: string }[] = [];
    const fresh = names.filter((name) => name.endsWith('.url') && !this.#seedsRead.has(name));
    // Read in parallel (a round trip each on a network mount), taken in listing order.
    const raws = new Map<string, string>();
    await mapLimit(fresh, READ_PARALLELISM, async (name) => {
      await this.#layout.fs.readFile(`${this.#layout.dir('seeds')}/${name}`).then(
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
      return (await this.#layout.fs.readdir(this.#layout.dir(kind))).filter(isSafeHostDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}
