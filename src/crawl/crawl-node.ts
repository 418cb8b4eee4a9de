import type { Dispatcher } from 'undici';
import { Leases } from '../cluster/lease.js';
import { Membership } from '../cluster/membership.js';
import { Ownership } from '../cluster/ownership.js';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import { ExitCode, FatalError, FetchFailure, describeError, mountFaultCode } from '../errors.js';
import { Fetcher } from '../fetch/fetcher.js';
import { ALLOW_ALL, RobotsCache, RobotsUnavailable } from '../fetch/robots.js';
import { hasRepeatedSegment, urlShape } from '../frontier/traps.js';
import { nextRetryDelay } from '../frontier/retry-policy.js';
import { ScopeFilter } from '../frontier/scope.js';
import type { Logger } from '../progress/logger.js';
import { CrawlStats } from '../progress/stats.js';
import { openDataDir, readMarker, type Marker } from '../store/data-dir.js';
import { HostStore } from '../store/host-store.js';
import { sweepStaleTemps } from '../store/temp-sweeper.js';
import { MARKER_FILE, type Layout } from '../store/layout.js';
import { hostDirOfNormalized } from '../url/host-dir.js';
import { urlKey } from '../url/key.js';
import { NORMALIZATION_VERSION, normalizeUrl, type NormalizeOptions } from '../url/normalize.js';
import { reconcileNormalization } from './normalization.js';
import { hookPage, type Hooks } from './hooks.js';
import { decodeBytes } from '../extract/charset.js';
import { buildErrsRecord, buildLinksRecord } from './build-records.js';
import { fetchPage, type Commit, type PageOutcome, type Target } from './fetch-page.js';
import { HostState, type QueueItem } from './host-state.js';
import { Reseeder, type OfferResult, type ReseedSink } from './reseeder.js';
import { Ring } from './ring.js';
import { setMaxListeners } from 'node:events';
import { hasSeeds, writeSeeds } from './seeds.js';

/** What a node's run came to. */
export interface RunResult {
  /** `complete`: every node idle and nothing left; `max-pages`: the limit was reached. */
  readonly reason: 'complete' | 'max-pages' | 'stopped' | 'mount-failed';
  readonly exitCode: number;
  readonly message?: string;
}

export interface CrawlNodeDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  /** HTTP dispatcher for tests; default: the fetcher's own undici Agent. */
  readonly dispatcher?: Dispatcher;
  readonly stats?: CrawlStats;
  /** The user's --hook module, if any. */
  readonly hooks?: Hooks;
}

/** How long in-flight requests may finish after a stop before they are abandoned. */
const STOP_GRACE_MS = 5_000;

/**
 * One crawling node (DESIGN §5): per-host queues and politeness (HostState), the fetcher,
 * the extractor and the store, ownership of hosts through heartbeats and leases, rounds of
 * reseeding, and the end of the crawl when every live node is idle. The same code runs
 * whether it is alone, one of `--processes N`, or one of many machines on a mount.
 */
export class CrawlNode {
  readonly #config: CrawlConfig;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly stats: CrawlStats;
  readonly #fetcher: Fetcher;
  readonly #scope: ScopeFilter;
  readonly #ownership: Ownership;
  readonly #hosts = new Map<string, HostState>();
  readonly #ring = new Ring<HostState>();
  readonly #abort = new AbortController();
  #layout!: Layout;
  #marker!: Marker;
  #store!: HostStore;
  #membership!: Membership;
  #leases!: Leases;
  #reseeder!: Reseeder;
  #robots!: RobotsCache;
  /** URL normalization in force: the data directory's, which may differ from the defaults. */
  #normalize!: NormalizeOptions;
  #queuedTotal = 0;
  #inFlight = 0;
  #fetchedThisRun = 0;
  #stopping: RunResult | undefined;
  #fault: { code: string; message: string } | undefined;
  /** When the mount first failed, reset by the next page that is stored: the give-up clock. */
  #faultFirstAt: number | undefined;
  #needFullReseed = false;
  #tickTimer: NodeJS.Timeout | undefined;
  #ticks = 0;
  #ticking = false;
  #wake: (() => void) | undefined;
  readonly #tasks = new Set<Promise<void>>();
  readonly #hooks: Hooks | undefined;

  constructor(config: CrawlConfig, deps: CrawlNodeDeps) {
    this.#config = config;
    this.#clock = deps.clock;
    this.#log = deps.logger;
    this.stats = deps.stats ?? new CrawlStats(() => deps.clock.monotonic());
    this.#fetcher = new Fetcher(config, { clock: deps.clock, ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}) });
    this.#scope = new ScopeFilter(config.scope, config.include, config.exclude);
    this.#ownership = new Ownership(config.nodeId, config.partition);
    this.#hooks = deps.hooks;
    // Every request in flight listens for the stop signal.
    setMaxListeners(Infinity, this.#abort.signal);
  }

  /** Asks the node to stop gracefully: in-flight requests finish (or are abandoned after a grace period). */
  stop(exitCode: number = ExitCode.INTERRUPTED): void {
    this.#stopping ??= { reason: 'stopped', exitCode };
    this.#wakeLoop();
  }

  /** Runs the node until the crawl is complete, a limit is reached, or it is stopped. */
  async run(): Promise<RunResult> {
    const { layout, marker } = await openDataDir(this.#config.dataDir, this.#config.nodeId, {
      version: NORMALIZATION_VERSION,
      sessionParams: [...this.#config.normalize.sessionParams].sort(),
    });
    this.#layout = layout;
    this.#marker = marker;
    this.#normalize = reconcileNormalization(marker, this.#config);
    this.#store = new HostStore(layout, { nodeId: this.#config.nodeId, fsync: this.#config.fsync });
    this.#membership = new Membership(layout, this.#config, { clock: this.#clock });
    this.#leases = new Leases(layout, this.#config.nodeId, (id) => this.#membership.isAlive(id));
    this.#reseeder = new Reseeder(layout, { clock: this.#clock, serverTime: () => this.#membership.serverTime });
    this.#robots = new RobotsCache(
      layout,
      this.#fetcher,
      {
        userAgent: this.#config.userAgent,
        maxAgeMs: this.#config.robotsMaxAgeMs,
        nodeId: this.#config.nodeId,
        fsync: this.#config.fsync,
      },
      this.#clock,
    );
    await writeSeeds(layout, this.#renormalize(this.#config.seedUrls), this.#config.nodeId);
    if (!this.#config.watch && !(await hasSeeds(layout))) {
      throw new FatalError(
        'NO_SEEDS',
        `nothing to crawl: give URLs, --seeds-file, or add seeds with \`mountcrawl seed URL --data ${this.#config.dataDir}\` (or use --watch to wait for them)`,
        ExitCode.USAGE,
      );
    }
    await this.#membership.beat(this.#status('starting'));
    await this.#membership.observe();
    // Nodes started together see each other within one heartbeat: wait for it, so that the
    // first node up does not take every host only to hand most of them over a moment later.
    await new Promise((resolve) => setTimeout(resolve, this.#config.heartbeatMs));
    await this.#membership.beat(this.#status('starting'));
    await this.#membership.observe();
    this.#ownership.setLive(this.#membership.liveIds());
    this.#scheduleTick();
    this.#log.info('node started', { node: this.#config.nodeId, data: this.#config.dataDir });
    try {
      return await this.#loop();
    } finally {
      await this.#shutdown();
    }
  }

  /** Seeds given on the command line, normalized again with the data directory's rules. */
  #renormalize(urls: readonly string[]): string[] {
    return urls.flatMap((u) => {
      const r = normalizeUrl(u, undefined, this.#normalize);
      return r.ok ? [r.url] : [];
    });
  }

  // ---- the control loop -------------------------------------------------------------------

  async #loop(): Promise<RunResult> {
    for (;;) {
      if (this.#stopping) return this.#stopping;
      if (this.#fault) {
        const failed = await this.#waitOutFault();
        if (failed) return failed;
        continue;
      }
      if (this.#fetchedThisRun >= this.#config.maxPages) {
        await this.#drainInFlight(Infinity);
        return { reason: 'max-pages', exitCode: ExitCode.OK, message: `--max-pages ${this.#config.maxPages} reached` };
      }
      if (this.#busy()) {
        this.stats.state = 'crawling';
        await this.#sleep(1_000);
        continue;
      }
      const retryAt = this.#nextRetryAt();
      if (retryAt < Infinity) {
        this.stats.state = 'waiting';
        await this.#sleep(Math.max(10, retryAt - this.#clock.monotonic()));
        continue;
      }
      // Nothing in memory: look at the mount.
      const allIdleBefore = this.#membership.allIdleSince();
      const reseedStart = this.#clock.monotonic();
      const full = this.#needFullReseed;
      this.#needFullReseed = false;
      let queued: number;
      try {
        const r = await this.#reseeder.reseed(this.#sink, full);
        queued = r.queued;
        if (r.queued > 0) {
          this.#log.info('reseed', { round: this.stats.round + 1, ...r, full });
        }
      } catch (err) {
        this.#onStoreError(err);
        continue;
      }
      if (queued > 0 || this.#busy() || this.#nextRetryAt() < Infinity) {
        this.stats.round++;
        this.stats.state = 'crawling';
        this.#membership.setState('crawling');
        continue;
      }
      this.stats.state = 'idle';
      this.#membership.setState('idle');
      if (
        !this.#config.watch &&
        allIdleBefore !== undefined &&
        allIdleBefore < reseedStart &&
        this.#membership.observations >= 2
      ) {
        return { reason: 'complete', exitCode: ExitCode.OK };
      }
      // Alone, the next (cheap, incremental) reseed can confirm the end at once; with peers,
      // wait for their next heartbeats.
      const alone = this.#membership.livePeers().length === 0;
      await this.#sleep(this.#config.watch ? Math.max(this.#config.heartbeatMs, 2_000) : alone ? 50 : this.#config.heartbeatMs);
    }
  }

  /** True while something is queued, in flight, or waiting for a lease, a listing or robots.txt. */
  #busy(): boolean {
    return this.#inFlight > 0 || this.#queuedTotal > 0;
  }

  #nextRetryAt(): number {
    let t = Infinity;
    for (const host of this.#hosts.values()) if (host.phase === 'ready') t = Math.min(t, host.nextRetryAt());
    return t;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        if (self.#wake === done) self.#wake = undefined;
        resolve();
      }
      this.#wake = done;
    });
  }

  #wakeLoop(): void {
    this.#wake?.();
  }

  // ---- what the reseeder and the extractor offer ------------------------------------------

  /** The node as the reseeder sees it. */
  readonly #sink: ReseedSink = {
    wantsHost: (hostDir) => this.#wantsHost(hostDir),
    prepareHosts: async (hostDirs) => {
      for (const dir of hostDirs) this.#adoptHost(dir, undefined);
      await Promise.all([...this.#hosts.values()].map((h) => h.loaded));
    },
    addSeed: (raw) => {
      const r = normalizeUrl(raw, undefined, this.#normalize);
      if (!r.ok) {
        this.#log.warn('ignoring a seed that is not a crawlable URL', { seed: raw.slice(0, 200), reason: r.reason });
        return undefined;
      }
      this.#scope.addSeed(r.hostDir);
      return { url: r.url, hostDir: r.hostDir };
    },
    offer: (url, hostDir, depth) => this.#offer(url, hostDir, depth),
  };

  #wantsHost(hostDir: string): boolean {
    return this.#scope.hostInScope(hostDir) && this.#ownership.ownsHost(hostDir);
  }

  /**
   * Takes a URL into the frontier if it is in scope, within the limits, owned by this node,
   * and neither done nor claimed. Cuts are counted (the summary shows them).
   */
  #offer(url: string, hostDir: string, depth: number): OfferResult {
    const cfg = this.#config;
    if (depth > cfg.maxDepth) {
      this.stats.cut.depth++;
      return 'known';
    }
    if (!this.#scope.accepts(url)) return 'known';
    if (this.#hooks?.filter !== undefined && !this.#hookFilter(url)) return 'known';
    if (hasRepeatedSegment(url, cfg.maxRepeatedSegments)) {
      this.stats.cut.repeatedSegment++;
      return 'known';
    }
    const key = urlKey(url);
    if (!this.#ownership.ownsUrl(hostDir, key)) return 'known';
    const host = this.#hosts.get(hostDir) ?? this.#adoptHost(hostDir, url);
    host.origin ??= originOf(url);
    if (host.phase === 'releasing' || host.gaveUp || host.done.has(key) || host.claimed.has(key)) return 'known';
    if (host.fetched + host.queued >= cfg.maxPagesPerHost) {
      this.stats.cut.hostBudget++;
      return 'known';
    }
    const shape = urlShape(url);
    const sameShape = host.shapes.get(shape) ?? 0;
    if (sameShape >= cfg.maxPagesPerPattern) {
      this.stats.cut.patternBudget++;
      return 'known';
    }
    if (this.#queuedTotal >= cfg.frontierCap) {
      this.stats.cut.frontierFull++;
      return 'full';
    }
    host.shapes.set(shape, sameShape + 1);
    host.claimed.add(key);
    host.push({ url, key, depth });
    this.#queuedTotal++;
    if (host.phase === 'ready') this.#schedule(host);
    return 'queued';
  }

  // ---- hosts: lease, listing, robots, release ----------------------------------------------

  /** Starts crawling a host this node owns: lease (host partitioning), listing, then ready. */
  #adoptHost(hostDir: string, url: string | undefined): HostState {
    const existing = this.#hosts.get(hostDir);
    if (existing) return existing;
    const host = new HostState(hostDir, this.#config);
    if (url !== undefined) host.origin = originOf(url);
    this.#hosts.set(hostDir, host);
    host.loaded = this.#takeHost(host).catch((err) => this.#onStoreError(err));
    return host;
  }

  async #takeHost(host: HostState): Promise<void> {
    try {
      if (this.#ownership.partition === 'host') {
        host.phase = 'acquiring';
        const r = await this.#leases.acquire(host.dir);
        if ((host.phase as string) === 'releasing') {
          if (r.ok) await this.#leases.release(host.dir);
          return;
        }
        if (!r.ok) {
          host.phase = 'blocked';
          return;
        }
        if (r.tookOver !== undefined) this.#log.info('took host over', { host: host.dir, from: r.tookOver });
      }
      host.phase = 'loading';
      await this.#load(host);
    } catch (err) {
      if (host.phase !== 'releasing') host.phase = 'blocked'; // tried again at the next tick
      throw err;
    }
  }

  /** Reads the host's listing (done set, errs, stale temp files), then the host is ready. */
  async #load(host: HostState): Promise<void> {
    // With a lease, every temp file of the host is a previous owner's; without (url
    // partitioning), only those of nodes that are gone.
    const self = this.#config.nodeId;
    const exclusive = this.#ownership.partition === 'host';
    const listing = await this.#store.listHost(host.dir, (id) => exclusive || (id !== self && this.#membership.isGone(id)));
    if (host.phase !== 'loading') return; // let go meanwhile
    if (listing.removedTemps > 0) this.#log.info('removed stale temp files', { host: host.dir, count: listing.removedTemps });
    for (const key of listing.linksKeys) host.done.add(key);
    const now = this.#clock.monotonic();
    const wallNow = this.#clock.now();
    for (const [key, rec] of listing.errs) {
      if (host.done.has(key)) continue;
      if (rec.final || rec.attempts >= this.#config.maxAttempts) {
        host.done.add(key);
        continue;
      }
      host.errs.set(key, rec);
      if (host.retries.some((r) => r.key === key)) continue;
      const dueWall = rec.nextAttemptAt === null ? wallNow : Date.parse(rec.nextAttemptAt);
      this.#addRetry(host, { url: rec.url, key, depth: rec.depth }, now + Math.max(0, dueWall - wallNow));
    }
    // What was offered before the listing came: done ones go, failed ones wait for their retry.
    for (const item of host.filter((i) => !host.done.has(i.key) && !host.errs.has(i.key))) {
      this.#queuedTotal--;
      if (host.done.has(item.key)) host.claimed.delete(item.key);
    }
    host.phase = 'ready';
    this.stats.hostsOwned = this.#countOwned();
    this.#schedule(host);
  }

  #addRetry(host: HostState, item: QueueItem, dueAt: number): void {
    host.claimed.add(item.key);
    host.retries.push({ ...item, dueAt });
    this.#armRetryTimer(host);
  }

  #armRetryTimer(host: HostState): void {
    const at = host.nextRetryAt();
    if (at === Infinity) return;
    if (host.retryTimer !== undefined) clearTimeout(host.retryTimer);
    host.retryTimer = setTimeout(() => {
      host.retryTimer = undefined;
      if (host.phase !== 'ready') return;
      this.#queuedTotal += host.promoteDueRetries(this.#clock.monotonic());
      this.#armRetryTimer(host);
      this.#schedule(host);
      this.#wakeLoop();
    }, Math.max(0, at - this.#clock.monotonic()));
  }

  #countOwned(): number {
    let n = 0;
    for (const h of this.#hosts.values()) if (h.phase === 'ready') n++;
    return n;
  }

  /** Forgets a host: queue and retries leave memory (they are on disk), the lease is released once idle. */
  #letGo(host: HostState, why: 'moved' | 'lost'): void {
    if (host.phase === 'releasing') return;
    const wasReady = host.phase === 'ready' || host.phase === 'loading';
    host.phase = 'releasing';
    this.#queuedTotal -= host.drain().length;
    host.retries.length = 0;
    if (host.wakeTimer) clearTimeout(host.wakeTimer);
    if (host.retryTimer) clearTimeout(host.retryTimer);
    if (why === 'lost') {
      host.leaseLost = true;
      this.#log.warn('lost the lease of a host', { host: host.dir });
    }
    const finish = async (): Promise<void> => {
      if (why === 'moved' && wasReady) await this.#leases.release(host.dir).catch(() => undefined);
      else this.#leases.forget(host.dir);
      this.#hosts.delete(host.dir);
      this.stats.hostsOwned = this.#countOwned();
    };
    if (host.politeness.inFlight === 0) void finish();
    else host.onIdle = finish;
  }

  async #ensureRobots(host: HostState): Promise<void> {
    if (host.robotsLoading || host.robots !== undefined) return;
    if (!this.#config.robots) {
      host.robots = ALLOW_ALL;
      return;
    }
    host.robotsLoading = true;
    host.politeness.started(this.#clock.monotonic());
    let outcome: 'ok' | 'transient' = 'ok';
    try {
      this.stats.requests++;
      host.robots = await this.#robots.rules(host.dir, host.origin ?? `http://${host.dir}`, this.#abort.signal);
      host.politeness.setCrawlDelay(host.robots.crawlDelaySeconds);
      host.robotsFailures = 0;
    } catch (err) {
      if (err instanceof RobotsUnavailable) {
        outcome = 'transient';
        host.robotsFailures++;
        if (host.robotsFailures >= this.#config.maxAttempts) {
          this.#giveUpHost(host, `robots.txt unavailable ${host.robotsFailures} times (${err.reason})`);
        } else {
          const wait = Math.min(this.#config.retryMaxMs, this.#config.retryBaseMs * 2 ** (host.robotsFailures - 1));
          this.#log.warn('robots.txt unavailable, host waits', { host: host.dir, reason: err.reason, waitMs: wait });
          host.robotsRetryAt = this.#clock.monotonic() + wait;
        }
      } else if (!(err instanceof FetchFailure && err.code === 'ABORTED')) {
        this.#onStoreError(err);
      }
    } finally {
      host.robotsLoading = false;
      this.#requestEnded(host, outcome);
    }
    this.#schedule(host);
    if (!this.#busy()) this.#wakeLoop();
  }

  /** Leaves a host alone for the rest of this run (its URLs stay on disk for a later run). */
  #giveUpHost(host: HostState, why: string): void {
    host.gaveUp = true;
    const dropped = host.drain();
    this.#queuedTotal -= dropped.length;
    for (const item of dropped) host.claimed.delete(item.key);
    for (const r of host.retries) host.claimed.delete(r.key);
    host.retries.length = 0;
    this.stats.cut.hostGaveUp++;
    this.#log.warn('leaving host alone for this run', { host: host.dir, reason: why, urls: dropped.length });
  }

  // ---- dispatch ---------------------------------------------------------------------------

  #schedule(host: HostState): void {
    if (!host.inRing && host.phase === 'ready' && host.queued > 0) {
      host.inRing = true;
      this.#ring.push(host);
    }
    this.#pump();
  }

  /** Starts requests while there is room: round robin over ready hosts, politeness per host. */
  #pump(): void {
    if (this.#stopping || this.#fault || this.#fenced()) return;
    const now = this.#clock.monotonic();
    while (this.#inFlight < this.#config.concurrency && this.#ring.length > 0) {
      if (this.#fetchedThisRun >= this.#config.maxPages) {
        this.#wakeLoop();
        return;
      }
      const host = this.#ring.shift()!;
      host.inRing = false;
      if (host.phase !== 'ready' || host.queued === 0) continue;
      if (host.robots === undefined) {
        if (now < host.robotsRetryAt) this.#wakeAt(host, host.robotsRetryAt);
        else void this.#ensureRobots(host);
        continue;
      }
      const at = host.politeness.nextStartAt(now);
      if (at === Infinity) continue; // full: rescheduled when a request finishes
      if (at > now) {
        this.#wakeAt(host, at);
        continue;
      }
      const item = host.shift()!;
      this.#queuedTotal--;
      this.#start(host, item, now);
      if (host.queued > 0) {
        host.inRing = true;
        this.#ring.push(host);
      }
    }
  }

  #wakeAt(host: HostState, at: number): void {
    if (host.wakeTimer !== undefined) clearTimeout(host.wakeTimer);
    host.wakeTimer = setTimeout(() => {
      host.wakeTimer = undefined;
      this.#schedule(host);
    }, Math.max(1, at - this.#clock.monotonic()));
  }

  #start(host: HostState, item: QueueItem, now: number): void {
    const target: Target = { ...item, hostDir: host.dir };
    if (!host.robots!.isAllowed(item.url)) {
      const failure = new FetchFailure('ROBOTS_DISALLOWED', 'final', 'disallowed by robots.txt');
      this.#track(this.#commitAlone(host, { commits: [{ type: 'error', target, failure }], tooLong: 0, requests: 0, claimed: [] }, item));
      return;
    }
    this.#inFlight++;
    this.#fetchedThisRun++;
    host.fetched++;
    host.politeness.started(now);
    this.#track(this.#runTask(host, item, target));
  }

  #track(task: Promise<void>): void {
    const p = task.catch((err) => this.#onStoreError(err)).finally(() => this.#tasks.delete(p));
    this.#tasks.add(p);
  }

  async #runTask(host: HostState, item: QueueItem, target: Target): Promise<void> {
    let outcome: PageOutcome | undefined;
    let kind: 'ok' | 'transient' | 'final' = 'ok';
    try {
      // With URL partitioning another node may have fetched this URL while it was its owner.
      if (this.#ownership.partition === 'url' && (await this.#store.hasLinks(host.dir, item.key))) {
        host.done.add(item.key);
        host.claimed.delete(item.key);
        host.fetched--;
        this.#fetchedThisRun--;
        return;
      }
      outcome = await fetchPage(target, {
        fetcher: this.#fetcher,
        clock: this.#clock,
        normalize: this.#normalize,
        maxRedirects: this.#config.maxRedirects,
        signal: this.#abort.signal,
        claimRedirect: (t) => this.#claimRedirect(host, t),
        pace: () => this.#pace(host),
      });
      this.stats.requests += outcome.requests;
      const first = outcome.commits[0]!;
      if (first.type === 'error') kind = first.failure.kind;
      const aborted = first.type === 'error' && first.failure.code === 'ABORTED';
      // A host that moved to another node is still ours until its in-flight requests are
      // committed and the lease is released; a host whose lease was lost is not.
      if (aborted || host.leaseLost || this.#fenced()) {
        this.#unclaim(host, item, outcome);
        return;
      }
      await this.#commit(host, outcome);
    } catch (err) {
      // The mount failed under the commit: the URL is not done; it goes back in the queue.
      if (outcome !== undefined) this.#unclaim(host, item, outcome);
      if (host.phase === 'ready' && !this.#stopping) {
        host.claimed.add(item.key);
        host.push(item);
        this.#queuedTotal++;
      }
      throw err;
    } finally {
      this.#inFlight--;
      this.#requestEnded(host, kind);
      this.#schedule(host);
      if (!this.#busy()) this.#wakeLoop();
    }
  }

  /** Every request to a host (page or robots.txt) ends here: politeness, then a pending hand-over. */
  #requestEnded(host: HostState, outcome: 'ok' | 'transient' | 'final'): void {
    host.politeness.finished(outcome);
    if (host.politeness.inFlight === 0 && host.onIdle) {
      const f = host.onIdle;
      host.onIdle = undefined;
      void f();
    }
  }

  /** Commits an outcome that needed no request (robots.txt said no). */
  async #commitAlone(host: HostState, outcome: PageOutcome, item: QueueItem): Promise<void> {
    this.#inFlight++;
    try {
      await this.#commit(host, outcome);
    } catch (err) {
      host.claimed.delete(item.key);
      throw err;
    } finally {
      this.#inFlight--;
      this.#schedule(host);
      if (!this.#busy()) this.#wakeLoop();
    }
  }

  #claimRedirect(host: HostState, t: Target): boolean {
    if (host.done.has(t.key) || host.claimed.has(t.key)) return false;
    if (!this.#scope.accepts(t.url) || !this.#ownership.ownsUrl(t.hostDir, t.key)) return false;
    if (!host.robots!.isAllowed(t.url)) return false;
    host.claimed.add(t.key);
    return true;
  }

  async #pace(host: HostState): Promise<void> {
    const wait = host.politeness.hopWaitMs(this.#clock.monotonic());
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    host.politeness.hopStarted(this.#clock.monotonic());
  }

  /** Releases the claims of an outcome that will not be committed (stopped, host lost). */
  #unclaim(host: HostState, item: QueueItem, outcome: PageOutcome): void {
    host.claimed.delete(item.key);
    for (const t of outcome.claimed) host.claimed.delete(t.key);
  }

  /** Writes an outcome (DESIGN invariant 2: body, then links record; targets before sources). */
  async #commit(host: HostState, outcome: PageOutcome): Promise<void> {
    this.stats.cut.tooLong += outcome.tooLong;
    for (const c of outcome.commits) {
      if (c.type === 'page') await this.#commitPage(host, c);
      else await this.#commitError(host, c);
    }
    for (const t of outcome.claimed) if (!host.done.has(t.key)) host.claimed.delete(t.key);
  }

  async #commitPage(host: HostState, page: Extract<Commit, { type: 'page' }>): Promise<void> {
    const c = page.body !== null && this.#hooks?.onPage !== undefined ? await this.#hookOnPage(page, page.body) : page;
    const key = c.target.key;
    const htmlPath = c.body === null ? null : this.#layout.relativeHtml(host.dir, key);
    const record = buildLinksRecord(c, { nodeId: this.#config.nodeId, nowMs: this.#clock.now(), htmlPath });
    await this.#store.writePage(host.dir, key, c.body, record);
    if (host.errs.has(key)) {
      host.errs.delete(key);
      await this.#store.removeErrs(host.dir, key);
    }
    host.done.add(key);
    host.claimed.delete(key);
    this.#faultFirstAt = undefined;
    this.stats.pages++;
    if (c.body !== null) {
      this.stats.htmlPages++;
      this.stats.bytes += c.body.length;
      if (c.response.truncated) this.stats.cut.truncated++;
    }
    let complete = true;
    for (const link of c.links) {
      const hostDir = hostDirOfNormalized(link);
      if (hostDir === undefined || !this.#wantsHost(hostDir)) continue;
      if (this.#offer(link, hostDir, c.target.depth + 1) === 'full') complete = false;
    }
    if (complete) this.#reseeder.markRead(host.dir, key);
  }

  /** A user's filter: a throwing filter keeps the URL (and is reported). */
  #hookFilter(url: string): boolean {
    try {
      return this.#hooks!.filter!(url) !== false;
    } catch (err) {
      this.#hookFailed('filter', err);
      return true;
    }
  }

  /** Lets a user's onPage change the links of a page and add data; a throwing hook changes nothing. */
  async #hookOnPage(c: Extract<Commit, { type: 'page' }>, body: Buffer): Promise<Extract<Commit, { type: 'page' }>> {
    try {
      const result = await this.#hooks!.onPage!(
        hookPage({
          url: c.target.url,
          status: c.response.status,
          contentType: c.response.contentType,
          depth: c.target.depth,
          html: decodeBytes(body, c.charset ?? 'UTF-8'),
          links: c.links,
        }),
      );
      if (result === undefined || result === null) return c;
      let links = c.links;
      if (Array.isArray(result.links)) {
        const seen = new Set<string>();
        links = [];
        for (const raw of result.links) {
          const r = typeof raw === 'string' ? normalizeUrl(raw, c.target.url, this.#normalize) : undefined;
          if (r?.ok && !seen.has(r.url)) {
            seen.add(r.url);
            (links as string[]).push(r.url);
          }
        }
      }
      return { ...c, links, ...(result.data !== undefined ? { data: JSON.parse(JSON.stringify(result.data)) as unknown } : {}) };
    } catch (err) {
      this.#hookFailed('onPage', err);
      return c;
    }
  }

  #hookFailed(what: string, err: unknown): void {
    this.stats.hookErrors++;
    if (this.stats.hookErrors <= 5) this.#log.warn(`--hook ${what} threw: ${describeError(err)}`);
  }

  async #commitError(host: HostState, c: Extract<Commit, { type: 'error' }>): Promise<void> {
    const { target, failure } = c;
    const previous = host.errs.get(target.key);
    const attempts = (previous?.attempts ?? 0) + 1;
    const retryIn =
      failure.kind === 'transient' ? nextRetryDelay(attempts, this.#config, failure.retryAfterMs) : undefined;
    const nowMs = this.#clock.now();
    const record = buildErrsRecord(target, failure, previous, { nodeId: this.#config.nodeId, nowMs, retryInMs: retryIn });
    await this.#store.writeErrs(host.dir, target.key, record);
    this.stats.countError(failure.code, record.final);
    if (failure.retryAfterMs !== undefined) {
      host.politeness.pauseUntil(this.#clock.monotonic() + Math.min(failure.retryAfterMs, this.#config.retryMaxMs));
    }
    if (record.final) {
      host.errs.delete(target.key);
      host.done.add(target.key);
      host.claimed.delete(target.key);
    } else {
      host.errs.set(target.key, record);
      this.#addRetry(host, { url: target.url, key: target.key, depth: target.depth }, this.#clock.monotonic() + retryIn!);
    }
  }

  // ---- heartbeat, membership, leases, faults ----------------------------------------------

  #scheduleTick(): void {
    this.#tickTimer = setTimeout(() => {
      this.#tickRunning = this.#tick().finally(() => {
        this.#tickRunning = undefined;
        if (!this.#closed) this.#scheduleTick();
      });
    }, this.#config.heartbeatMs);
  }

  /** The heartbeat in progress, if any: shutdown waits for it, so it cannot rewrite the record after leave(). */
  #tickRunning: Promise<void> | undefined;

  #closed = false;

  #status(state: string): Parameters<Membership['beat']>[0] {
    return {
      state: state as 'crawling',
      round: this.stats.round,
      hostsOwned: this.#countOwned(),
      pages: this.stats.pages,
      errors: this.stats.errorCount,
      queued: this.#queuedTotal,
      inFlight: this.#inFlight,
      rate: Math.round(this.stats.rate() * 10) / 10,
    };
  }

  /** True when this node has not reached the mount for long enough that others may count it dead. */
  #fenced(): boolean {
    return this.#clock.monotonic() - this.#membership.lastBeatOk > this.#config.deadAfterMs / 2;
  }

  async #tick(): Promise<void> {
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      this.#ticks++;
      const wasFenced = this.#fenced();
      await this.#checkMarker();
      await this.#membership.beat(this.#status(this.#stopping ? 'stopping' : this.stats.state));
      const changed = await this.#membership.observe();
      this.stats.nodesAlive = this.#membership.liveIds().length;
      this.stats.queued = this.#queuedTotal;
      this.stats.inFlight = this.#inFlight;
      if (changed) this.#rebalance();
      if (this.#ownership.partition === 'host') {
        const lost = await this.#leases.verify(changed || wasFenced || this.#ticks % 5 === 0);
        for (const dir of lost) {
          const host = this.#hosts.get(dir);
          if (host) this.#letGo(host, 'lost');
        }
        for (const host of this.#hosts.values()) {
          if (host.phase === 'blocked') host.loaded = this.#takeHost(host).catch((err) => this.#onStoreError(err));
        }
        await this.#releaseOrphanLeases();
      }
      if (wasFenced) this.#log.info('reached the mount again');
      const serverNow = this.#membership.serverTime?.mtimeMs;
      if (this.#ticks % 300 === 1 && serverNow !== undefined) {
        const removed = await sweepStaleTemps(this.#layout, serverNow, 10 * this.#config.deadAfterMs);
        if (removed > 0) this.#log.info('removed stale temp files', { count: removed });
      }
      this.#pump();
    } catch (err) {
      this.#onStoreError(err);
    } finally {
      this.#ticking = false;
    }
  }

  /**
   * A lease held for a host this node no longer manages would block its rightful owner
   * forever: give such leases back (a safety net; hand-over normally releases them).
   */
  async #releaseOrphanLeases(): Promise<void> {
    for (const dir of [...this.#leases.held()]) {
      const host = this.#hosts.get(dir);
      if (host !== undefined && (host.phase !== 'releasing' || host.politeness.inFlight > 0)) continue;
      if (host !== undefined) this.#hosts.delete(dir);
      this.#log.warn('releasing a lease no host needed', { host: dir });
      await this.#leases.release(dir).catch(() => undefined);
    }
  }

  /** The live set changed: let go of hosts that moved away; a node left, so hosts may have come our way. */
  #rebalance(): void {
    const live = this.#membership.liveIds();
    const before = this.#ownership.liveCount;
    this.#ownership.setLive(live);
    this.#log.info('nodes changed', { alive: live.length });
    for (const host of [...this.#hosts.values()]) {
      if (this.#ownership.partition === 'host') {
        if (!this.#ownership.ownsHost(host.dir)) this.#letGo(host, 'moved');
      } else {
        for (const item of host.filter((i) => this.#ownership.ownsUrl(host.dir, i.key))) {
          host.claimed.delete(item.key);
          this.#queuedTotal--;
        }
      }
    }
    if (live.length <= before || this.#ownership.partition === 'url') this.#needFullReseed = true;
    this.#wakeLoop();
  }

  async #checkMarker(): Promise<void> {
    const marker = await readMarker(this.#layout);
    if (marker === undefined || marker.id !== this.#marker.id) {
      const e: NodeJS.ErrnoException = new Error(
        `its marker ${MARKER_FILE} is gone or changed (the mount dropped, or the directory was removed or replaced)`,
      );
      e.code = 'EMOUNTLOST';
      throw e;
    }
  }

  /** A failure of the mount stops fetching; anything else is a bug and ends the run. */
  #onStoreError(err: unknown): void {
    const errno = (err as NodeJS.ErrnoException).code;
    let code = errno === 'EMOUNTLOST' ? 'MOUNT_LOST' : mountFaultCode(err);
    // A directory of ours vanished: the data directory was removed or the mount went away
    // (the probe of #waitOutFault tells which: the marker is checked first).
    if (code === undefined && (errno === 'ENOENT' || errno === 'ENOTDIR')) code = 'MOUNT_LOST';
    if (code === undefined) {
      if (this.#stopping?.exitCode !== ExitCode.INTERNAL) {
        this.#log.error(`INTERNAL: ${describeError(err)} (a bug: please report it with MOUNTCRAWL_DEBUG=1 output)`);
        if (process.env.MOUNTCRAWL_DEBUG) this.#log.error(String((err as Error).stack));
      }
      this.#stopping ??= { reason: 'stopped', exitCode: ExitCode.INTERNAL, message: `INTERNAL: ${describeError(err)}` };
      this.#wakeLoop();
      return;
    }
    if (this.#fault === undefined) {
      this.#fault = { code, message: `${this.#config.dataDir}: ${describeError(err)}` };
      this.#faultFirstAt ??= this.#clock.monotonic();
      const left = Math.max(0, this.#config.mountRetryMs - (this.#clock.monotonic() - this.#faultFirstAt)) / 1000;
      this.#log.error(`${code}: ${this.#fault.message}; fetching paused, retrying the mount for ${Math.round(left)} s`);
    }
    this.#wakeLoop();
  }

  /** Waits for the mount to come back; returns the final result when it does not. */
  async #waitOutFault(): Promise<RunResult | undefined> {
    const fault = this.#fault!;
    while (!this.#stopping) {
      if (this.#clock.monotonic() - (this.#faultFirstAt ?? 0) > this.#config.mountRetryMs) {
        return {
          reason: 'mount-failed',
          exitCode: ExitCode.MOUNT,
          message: `${fault.code}: ${fault.message} (gave up after ${Math.round(this.#config.mountRetryMs / 1000)} s)`,
        };
      }
      await this.#sleep(Math.min(2_000, this.#config.heartbeatMs));
      try {
        await this.#checkMarker();
        await this.#membership.beat(this.#status('waiting'));
        await this.#store.probe();
        if (this.#ownership.partition === 'host') {
          for (const dir of await this.#leases.verify(true)) {
            const host = this.#hosts.get(dir);
            if (host) this.#letGo(host, 'lost');
          }
        }
        this.#fault = undefined;
        this.#log.warn('the mount is back: crawling again');
        this.#pump();
        return undefined;
      } catch {
        // still failing
      }
    }
    return undefined;
  }

  async #drainInFlight(graceMs: number): Promise<void> {
    const deadline = this.#clock.monotonic() + graceMs;
    while (this.#tasks.size > 0 && this.#clock.monotonic() < deadline) {
      await Promise.race([Promise.allSettled([...this.#tasks]), this.#sleepFor(Math.min(250, deadline - this.#clock.monotonic()))]);
    }
  }

  #sleepFor(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.max(1, ms)));
  }

  async #shutdown(): Promise<void> {
    this.stats.state = 'stopping';
    await this.#drainInFlight(STOP_GRACE_MS);
    this.#abort.abort();
    await this.#drainInFlight(2_000);
    this.#closed = true;
    if (this.#tickTimer) clearTimeout(this.#tickTimer);
    await this.#tickRunning;
    for (const host of this.#hosts.values()) {
      if (host.wakeTimer) clearTimeout(host.wakeTimer);
      if (host.retryTimer) clearTimeout(host.retryTimer);
    }
    // Best effort: on a failed mount these fail too, and others take over after dead-after.
    for (const dir of [...this.#leases.held()]) await this.#leases.release(dir).catch(() => undefined);
    await this.#membership.leave().catch(() => undefined);
    await this.#fetcher.close().catch(() => undefined);
  }
}

/** `scheme://authority` of a normalized URL. */
function originOf(url: string): string {
  const slash = url.indexOf('/', url.indexOf('://') + 3);
  return slash < 0 ? url : url.slice(0, slash);
}
