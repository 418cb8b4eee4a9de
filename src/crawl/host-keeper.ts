import type { Leases } from '../cluster/lease.js';
import type { Membership } from '../cluster/membership.js';
import type { Ownership } from '../cluster/ownership.js';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { RobotsCache } from '../fetch/robots.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import type { HostStore } from '../store/host-store.js';
import type { Frontier } from '../frontier/frontier.js';
import type { HostState } from '../frontier/host-state.js';
import type { Recrawler } from '../recrawl/recrawler.js';
import type { Sitemaps } from '../sitemap/sitemaps.js';
import type { SummaryWriter } from './summary-writer.js';
import { applyErrs } from './host-errs.js';

export interface HostKeeperDeps {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly stats: CrawlStats;
  readonly ownership: Ownership;
  readonly membership: Membership;
  readonly leases: Leases;
  readonly store: HostStore;
  /** The hosts' robots.txt files: the sitemaps they name are known at take. */
  readonly robots: RobotsCache;
  readonly frontier: Frontier;
  readonly onStoreError: (err: unknown) => void;
  readonly wake: () => void;
  /** Revisits (--recrawl-after): pages with links records are scheduled, not done. */
  readonly recrawler?: Recrawler | undefined;
  /** Host summaries (docs/protocol.md): written before a host's lease is released. */
  readonly summaries?: Pick<SummaryWriter, 'taken' | 'forget'> | undefined;
  /** Sitemaps (docs/sitemaps.md): those known at take are registered before the queue starts. */
  readonly sitemaps?: Sitemaps | undefined;
  /**
   * A host let go may be written by its next owner: the reseeds list its directory again. A
   * borrowed host's records are marked read at take.
   */
  readonly reseeder: { unsettle(hostDir: string): void; markRead(hostDir: string, key: string): void; wantFull(): void };
}

/**
 * Hosts taken at once (lease, listing). A node that starts with hundreds of hosts, or takes
 * a dead node's over, took them all at once: over sshfs, where libuv's 16 threads and the
 * mount's round trips bound the file operations in flight, every host then became ready at
 * about the same time, 1.6 s after the reseed for 100 hosts, and no request started before.
 * A few at a time, the first hosts are ready at once and the rest follow at the same pace
 * (docs/benchmarks-log.md, "The start and end of a node over sshfs").
 */
export const TAKE_PARALLELISM = 8;

/**
 * A borrowed host whose lease its lender still holds (it gave the host to an idle peer with
 * requests in flight, and releases the lease when they end) is tried again this often for a
 * heartbeat, rather than at the next heartbeat only (docs/protocol.md, "Lending hosts").
 */
export const BORROWED_RETRY_MS = 100;

/**
 * The life of a host in this node (docs/architecture.md): take its lease (host partitioning), read its
 * listing once (done set, errs records to retry, a previous owner's temp files to remove),
 * and let it go again when ownership moves (after its requests in flight) or when its lease
 * is lost (at once). Its robots.txt is src/crawl/host-robots.ts's.
 */
export class HostKeeper {
  readonly #d: HostKeeperDeps;
  /** Takes under way (at most TAKE_PARALLELISM), and those waiting for their turn. */
  #taking = 0;
  readonly #waitingToTake: (() => void)[] = [];
  /** The node is leaving: no more hosts are taken. */
  #closed = false;
  /** Settles when a host's lease and listing step is over (whatever its outcome). */
  readonly #loaded = new WeakMap<HostState, Promise<void>>();
  /** Monotonic time a borrowed host first found its lease held (#retrySoon). */
  readonly #blockedSince = new WeakMap<HostState, number>();

  constructor(deps: HostKeeperDeps) {
    this.#d = deps;
  }

  /** A host this node owns is wanted (Admission.want, at its first use): takes its lease and reads its listing. */
  hostWanted(host: HostState): void {
    this.#loaded.set(
      host,
      this.#take(host).catch((err) => this.#d.onStoreError(err)),
    );
  }

  /** Settles when the host's lease and listing step is over, whatever its outcome. */
  loaded(host: HostState): Promise<void> {
    return this.#loaded.get(host) ?? Promise.resolve();
  }

  /** Settles when the lease and listing step of every host of the frontier is over. */
  async allLoaded(): Promise<void> {
    await Promise.all([...this.#d.frontier.hosts.values()].map((h) => this.loaded(h)));
  }

  /**
   * Stops taking hosts (the node is leaving): takes still waiting for their turn are dropped,
   * and those under way are awaited, at most `waitMs` (a stalled mount must not hold the exit),
   * so that no lease is taken after the node released its leases.
   */
  async close(waitMs: number): Promise<void> {
    this.#closed = true;
    const { clock } = this.#d;
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = clock.setTimeout(resolve, waitMs);
    });
    await Promise.race([this.allLoaded(), waited]);
    clock.clearTimeout(timer);
  }

  /** Tries again for hosts whose lease a live node held (it lets go once it sees it is not the owner). */
  retryBlocked(): void {
    for (const host of this.#d.frontier.hosts.values()) {
      if (host.phase === 'blocked') this.hostWanted(host);
    }
  }

  async #take(host: HostState): Promise<void> {
    if (this.#taking < TAKE_PARALLELISM) this.#taking++;
    else await new Promise<void>((resolve) => this.#waitingToTake.push(resolve)); // a finished take hands its slot on
    try {
      if (host.phase !== 'releasing' && !this.#closed) await this.#takeNow(host);
    } finally {
      const next = this.#waitingToTake.shift();
      if (next !== undefined) next();
      else this.#taking--;
    }
  }

  async #takeNow(host: HostState): Promise<void> {
    const { leases, log, ownership } = this.#d;
    try {
      if (ownership.partition === 'host') {
        host.moveTo('acquiring');
        const r = await leases.acquire(host.dir);
        if (host.phase === 'releasing') {
          if (r.ok) await leases.release(host.dir);
          return;
        }
        if (!r.ok) {
          host.moveTo('blocked');
          this.#retrySoon(host);
          return;
        }
        this.#blockedSince.delete(host);
        if (r.tookOver !== undefined) log.info('took host over', { host: host.dir, from: r.tookOver });
      }
      if (!host.moveTo('loading')) return;
      await this.#load(host);
    } catch (err) {
      host.moveTo('blocked'); // tried again at the next heartbeat (unless let go meanwhile)
      throw err;
    }
  }

  /** A borrowed host whose lease is held: tried again every BORROWED_RETRY_MS for a heartbeat. */
  #retrySoon(host: HostState): void {
    const { clock, config, ownership } = this.#d;
    if (ownership.rendezvousOwner(host.dir) === config.nodeId) return;
    const now = clock.monotonic();
    const since = this.#blockedSince.get(host) ?? now;
    this.#blockedSince.set(host, since);
    if (now - since >= config.heartbeatMs) return;
    clock.setTimeout(() => {
      if (host.phase === 'blocked' && !this.#closed) this.hostWanted(host);
    }, BORROWED_RETRY_MS);
  }

  /** Reads the host's listing (done set, errs, stale temp files); then the host is ready. */
  async #load(host: HostState): Promise<void> {
    const { config, clock, membership, store, log, ownership, frontier } = this.#d;
    // With a lease, every temp file of the host is a previous owner's; without (URL
    // partitioning), only those of nodes that are gone.
    const exclusive = ownership.partition === 'host';
    const isGone = (id: string): boolean => exclusive || (id !== config.nodeId && membership.isGone(id));
    const listing = await store.listHost(host.dir, isGone, exclusive && this.#d.summaries !== undefined);
    if (host.phase !== 'loading') return; // let go meanwhile
    if (listing.removedTemps > 0) log.debug('removed stale temp files', { host: host.dir, count: listing.removedTemps });
    this.#d.summaries?.taken(host.dir, listing.linksKeys.size);
    for (const [key, rec] of listing.errs) if (!listing.linksKeys.has(key)) host.errsRecorded(key, rec);
    // A borrowed host (docs/protocol.md, "Lending hosts"): its lender sent on every link of
    // its records when it wrote them, and the host's queue came with the lend; the reseeds
    // need not read those records again (a full reseed, after a node is lost, still does).
    if (exclusive && ownership.rendezvousOwner(host.dir) !== config.nodeId && ownership.ownsHost(host.dir)) {
      for (const key of listing.linksKeys) this.#d.reseeder.markRead(host.dir, key);
    }
    // Offered before the listing came: a page with a record goes (done, or queued by its schedule when due).
    frontier.filterQueue(host, (i) => !listing.linksKeys.has(i.key));
    const recrawler = this.#d.recrawler;
    if (recrawler === undefined) for (const key of listing.linksKeys) host.addDone(key);
    else if (!(await recrawler.load(host, listing.linksKeys, listing.errs))) return;
    applyErrs(host, listing.errs, { frontier, clock, maxAttempts: config.maxAttempts });
    // Sitemaps known at take (--sitemap ones, robots.txt's as stored): queued, or due again with --recrawl-after.
    if (this.#d.sitemaps !== undefined) {
      await this.#d.sitemaps.discover(host, config.robots ? await this.#d.robots.storedSitemaps(host.dir) : []);
      if (host.phase !== 'loading') return;
    }
    frontier.filterQueue(host, (i) => !host.isDone(i.key) && host.errsOf(i.key) === undefined);
    host.moveTo('ready');
    this.#d.stats.hostsOwned = frontier.readyCount();
    frontier.schedule(host);
  }

  /**
   * Lets a host go: its queue and retries leave memory (they are on disk). `moved` (another
   * node owns it now): requests in flight finish and are committed, then the lease is
   * released. `lost` (another node holds the lease): nothing more is written for it.
   * Resolves once the host is gone from this node (after its requests in flight).
   */
  letGo(host: HostState, why: 'moved' | 'lost'): Promise<void> {
    // Moved with its lease held: written whole and released for the next owner.
    const handOn = why === 'moved' && (host.phase === 'ready' || host.phase === 'loading');
    if (!host.letGo()) return Promise.resolve();
    const { leases, log, stats, frontier } = this.#d;
    frontier.dropHost(host);
    if (handOn) stats.hostsHandedOn++;
    this.#d.reseeder.unsettle(host.dir);
    if (why === 'lost') {
      host.loseLease();
      log.warn('lost the lease of a host', { host: host.dir });
    }
    const finish = async (): Promise<void> => {
      // The schedule and the summary are written while the lease is still ours, never after it was lost.
      await this.#d.recrawler?.forget(host.dir, handOn);
      await this.#d.summaries?.forget(host.dir, handOn);
      if (handOn) await leases.release(host.dir).catch(() => undefined);
      else leases.forget(host.dir);
      frontier.forget(host.dir);
      stats.hostsOwned = frontier.readyCount();
    };
    if (host.inFlight === 0) return finish();
    return new Promise<void>((resolve) => {
      host.whenIdle(() => void finish().finally(resolve));
    });
  }

  /** Lets go of the hosts whose leases were found lost. */
  dropLost(hostDirs: readonly string[]): void {
    for (const dir of hostDirs) {
      const host = this.#d.frontier.hosts.get(dir);
      if (host === undefined) continue;
      this.letGo(host, 'lost');
      // This node was counted dead, and the queue it dropped held links that other nodes'
      // records gave it (hand-offs, its reseeds), records marked read since; the host may come
      // back before the node that took it over reseeded fully. So a full reseed is due now, and
      // no host is lent before it ends (docs/protocol.md, "Who crawls what").
      this.#d.reseeder.wantFull();
    }
  }

  /**
   * The live set (or a lend) changed: lets go of hosts that now belong to another node (host
   * partitioning) or drops queued URLs that do (URL partitioning). Returns true when hosts
   * may have come this node's way (a node left), whose links it skipped before.
   */
  rebalance(liveBefore: number): boolean {
    const { ownership, frontier } = this.#d;
    for (const host of [...frontier.hosts.values()]) {
      if (ownership.partition === 'host') {
        if (!ownership.ownsHost(host.dir)) this.letGo(host, 'moved');
      } else {
        frontier.filterQueue(host, (i) => ownership.ownsUrl(host.dir, i.key));
      }
    }
    return ownership.liveCount <= liveBefore || ownership.partition === 'url';
  }

  /**
   * A lease held for a host this node no longer manages would block its rightful owner
   * forever: give such leases back (a safety net; a hand-over normally releases them). A
   * host still known, even one being let go, is left to `letGo`: it writes the host's summary
   * before it releases the lease, and the next owner counts the pages the summary names
   * (docs/protocol.md, "Host summaries").
   */
  async releaseOrphanLeases(): Promise<void> {
    const { leases, log } = this.#d;
    for (const dir of [...leases.held()]) {
      if (this.#d.frontier.hosts.has(dir)) continue;
      log.warn('releasing a lease no host needed', { host: dir });
      await leases.release(dir).catch(() => undefined);
    }
  }
}
