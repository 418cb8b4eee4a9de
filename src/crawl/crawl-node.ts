import { setTimeout as delay } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { Ownership } from '../cluster/ownership.js';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import { ExitCode, FatalError, describeError } from '../errors.js';
import { Fetcher } from '../fetch/fetcher.js';
import { ScopeFilter } from '../frontier/scope.js';
import type { Logger } from '../progress/logger.js';
import { CrawlStats } from '../progress/stats.js';
import { normalizeUrl, type NormalizeOptions } from '../url/normalize.js';
import { WarcCapture } from '../warc/warc-capture.js';
import type { Hooks } from '../hooks/hooks.js';
import { Heartbeat } from './heartbeat.js';
import { assembleNode, type Parts } from './node-parts.js';
import type { ReseedScope, ReseedSink } from '../reseed/reseeder.js';
import { hasSeeds, writeSeeds } from '../reseed/seeds.js';
import { writeSitemapSeeds } from '../sitemap/sitemaps.js';
import { WATCH_POLL_MS, afterEmptyReseed, peersStill } from './termination.js';
import { countDiscovery } from '../cluster/handoff-stats.js';
import { HANDOFF_FLUSH_MS, HANDOFF_POLL_MS, type HandoffFrontier } from '../cluster/handoff-exchange.js';
import { DoneLeavers } from '../cluster/done-leavers.js';
import { leaveDone } from './leave-done.js';
import { removeLeftTemps } from '../store/left-temps.js';
import type { HostErrs } from '../store/errs-tally.js';

/** What a node's run came to. */
export interface RunResult {
  /** `complete`: every node idle and nothing left; `max-pages`: the limit was reached. */
  readonly reason: 'complete' | 'max-pages' | 'stopped' | 'mount-failed';
  readonly exitCode: number;
  /** For a failure, one line starting with its CODE. */
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

/** How long requests in flight may finish after a stop before they are abandoned. */
const STOP_GRACE_MS = 5_000;
/** How often a starting node with siblings looks for them in nodes/. */
const STARTUP_POLL_MS = 50;
/** Under --watch, how often a reseed stats every directory of the hosts this node owns (#reseedScope). */
const OWN_SWEEP_MS = 60_000;

/**
 * One crawling node (docs/architecture.md): the control loop of rounds and reseeds; the
 * heartbeat (heartbeat.ts) keeps membership, leases and ownership current, and the
 * termination rule (termination.ts) says when the crawl is over. The same code
 * runs alone, as one of `--processes N`, or as one of many machines on a mount. Its parts:
 * Frontier (queues, politeness, dispatch), HostKeeper (leases, listings, robots.txt, hand-
 * over), Committer (records), MountGuard (faults of the mount), Reseeder (the mount's links).
 */
export class CrawlNode {
  readonly stats: CrawlStats;
  readonly #config: CrawlConfig;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #fetcher: Fetcher;
  readonly #scope: ScopeFilter;
  readonly #ownership: Ownership;
  readonly #hooks: Hooks | undefined;
  readonly #warc: WarcCapture | undefined;
  #p: Parts | undefined;
  #stopping: RunResult | undefined;
  /** The next reseed reads every record (the first one, with hand-offs; and after hosts were gained). */
  #needFullReseed = false;
  /** Monotonic time the last reseed began (--watch reseeds while visits wait). */
  #lastReseed = -Infinity;
  #heldErrs: ReadonlyMap<string, HostErrs> | undefined;
  /** Monotonic time the last reseed looked at every owned directory (#reseedScope). */
  #lastOwnSweep = -Infinity;
  #wake: (() => void) | undefined;
  #heartbeat: Heartbeat | undefined;
  /** Hosts gained from nodes that left done (docs/protocol.md, "Leaving done"). */
  readonly #leftDone = new DoneLeavers();

  constructor(config: CrawlConfig, deps: CrawlNodeDeps) {
    this.#config = config;
    this.#clock = deps.clock;
    this.#log = deps.logger;
    this.stats = deps.stats ?? new CrawlStats(() => deps.clock.monotonic());
    this.#warc = config.warc ? WarcCapture.forNode(config, deps.clock, deps.logger) : undefined;
    this.#fetcher = new Fetcher(config, { clock: deps.clock, capture: this.#warc, ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}) });
    this.#scope = new ScopeFilter(config.scope, config.include, config.exclude);
    this.#ownership = new Ownership(config.nodeId, config.partition);
    this.#hooks = deps.hooks;
  }

  /** Directory names of the hosts this node owns and crawls now. */
  ownedHosts(): string[] {
    const out: string[] = [];
    for (const h of this.#p?.frontier.hosts.values() ?? []) if (h.phase === 'ready') out.push(h.dir);
    return out;
  }

  /** Asks the node to stop gracefully: requests in flight finish (or are abandoned after a grace period). */
  stop(exitCode: number = ExitCode.INTERRUPTED): void {
    this.#stopping ??= { reason: 'stopped', exitCode };
    this.#wakeLoop();
  }

  /** Looks at the other nodes now rather than at the next heartbeat (a sibling said it changed). */
  look(): void {
    this.#heartbeat?.beatSoon();
  }

  /** Runs the node until the crawl is complete, a limit is reached, or it is stopped. */
  async run(): Promise<RunResult> {
    const p = await this.#open();
    let result: RunResult | undefined;
    try {
      result = (await this.#startUp(p)) ?? (await this.#loop(p));
      return result;
    } finally {
      await this.#shutdown(p, result?.reason === 'complete');
    }
  }

  /**
   * Joins the crawl (#join); a failure of the mount on the way is waited out as in the loop
   * (--mount-retry, then exit MOUNT) and the join starts again: every step of it may be
   * repeated. Returns a result when the node must stop before it crawls.
   */
  async #startUp(p: Parts): Promise<RunResult | undefined> {
    for (;;) {
      if (this.#stopping) return this.#stopping;
      try {
        await this.#join(p);
        return undefined;
      } catch (err) {
        if (err instanceof FatalError || p.guard.classify(err) === undefined) throw err;
      }
      const failed = await this.#waitOutFault(p);
      if (failed) return failed;
    }
  }

  /** Seeds, the first records, the wait for siblings: everything before the first reseed. */
  async #join(p: Parts): Promise<void> {
    await writeSeeds(p.layout, this.#renormalize(p.normalize), this.#config.nodeId);
    await writeSitemapSeeds(p.layout, this.#config.sitemapUrls ?? [], p.normalize, { nodeId: this.#config.nodeId });
    if (!this.#config.watch && !(await hasSeeds(p.layout))) {
      throw new FatalError(
        'NO_SEEDS',
        `nothing to crawl: give URLs, --seeds-file, or add seeds with \`mountcrawl seed URL --data ${this.#config.dataDir}\` (or use --watch to wait for them)`,
        ExitCode.USAGE,
      );
    }
    await p.membership.beat(this.#heartbeat!.status('starting'));
    await p.membership.observe();
    // Siblings under one supervisor know they are N: each waits (a heartbeat at most) until
    // it sees the others, so that the first one up does not take every host only to hand most
    // of them over a moment later. A node started on its own does not wait with host leases
    // (docs/protocol.md, "Nodes and liveness"): nodes that start later join as any node joins.
    // With --partition url a join repeats what is in flight: it waits a heartbeat, as before.
    const expected = this.#config.startPeers ?? 0;
    if (expected === 0 && this.#ownership.partition === 'url') await delay(this.#config.heartbeatMs);
    for (let waited = 0; expected > 0 && waited < this.#config.heartbeatMs; waited += STARTUP_POLL_MS) {
      await delay(STARTUP_POLL_MS);
      await p.membership.observe();
      if (p.membership.livePeers().length >= expected) break;
    }
    await p.membership.beat(this.#heartbeat!.status('starting'));
    await p.membership.observe();
    this.#ownership.setLive(p.membership.liveIds());
    p.membership.takeDepartures(); // the first reseed is full: it covers them
    // With hand-offs later reseeds skip other hosts' records: the first one reads them all.
    if (p.handoffs !== undefined) this.#needFullReseed = true;
    this.#heartbeat!.start();
    this.#log.info('node started', { node: this.#config.nodeId, data: this.#config.dataDir });
  }

  /** Opens the data directory and builds the parts that use it. */
  async #open(): Promise<Parts> {
    this.#p = await assembleNode({
      config: this.#config,
      clock: this.#clock,
      log: this.#log,
      stats: this.stats,
      fetcher: this.#fetcher,
      scope: this.#scope,
      ownership: this.#ownership,
      hooks: this.#hooks,
      warc: this.#warc,
      control: {
        mayStart: () => this.#mayStart(),
        fenced: () => this.#fenced(),
        stopping: () => this.#stopping !== undefined,
        onStoreError: (err) => this.#onStoreError(err),
        wake: () => this.#wakeLoop(),
        pump: () => this.#p?.requests.pump(),
      },
    });
    this.#heartbeat = new Heartbeat({
      config: this.#config,
      clock: this.#clock,
      log: this.#log,
      stats: this.stats,
      ownership: this.#ownership,
      parts: this.#p,
      events: {
        stopping: () => this.#stopping !== undefined,
        needFullReseed: () => {
          this.#needFullReseed = true;
        },
        leftDone: (before, done, lent) => this.#leftDone.left(before, done, lent),
        wake: () => this.#wakeLoop(),
        onStoreError: (err) => this.#onStoreError(err),
      },
    });
    return this.#p;
  }

  /** True when this node has not reached the mount for long enough that others may count it dead. */
  #fenced(): boolean {
    return this.#heartbeat?.fenced() ?? false;
  }

  /** Seeds given on the command line, normalized again with the data directory's rules. */
  #renormalize(normalize: NormalizeOptions): string[] {
    return this.#config.seedUrls.flatMap((u) => {
      const r = normalizeUrl(u, undefined, normalize);
      return r.ok ? [r.url] : [];
    });
  }

  // ---- the control loop -------------------------------------------------------------------

  async #loop(p: Parts): Promise<RunResult> {
    for (;;) {
      if (this.#stopping) return this.#stopping;
      if (p.guard.fault) {
        const failed = await this.#waitOutFault(p);
        if (failed) return failed;
        continue;
      }
      if (p.requests.fetched >= this.#config.maxPages) {
        await p.requests.drain(Infinity);
        return { reason: 'max-pages', exitCode: ExitCode.OK, message: `--max-pages ${this.#config.maxPages} reached` };
      }
      if (this.#busy(p)) {
        this.stats.state = 'crawling';
        if (p.handoffs === undefined) await this.#sleep(1_000);
        else await this.#exchangeWhileBusy(p);
        continue;
      }
      const retryAt = p.frontier.nextRetryAt();
      // With --watch, visits due later (docs/recrawl.md) do not stop the reseeds for new work.
      const now = this.#clock.monotonic();
      const watch = this.#config.watch;
      const pollGap = Math.max(this.#config.heartbeatMs, WATCH_POLL_MS);
      if (retryAt < Infinity && (!watch || retryAt - now < pollGap || now - this.#lastReseed < pollGap)) {
        this.stats.state = 'waiting';
        const until = watch ? Math.min(retryAt, this.#lastReseed + pollGap) : retryAt;
        await this.#sleep(Math.max(10, until - now));
        continue;
      }
      // Due pages that did not fit under --frontier-cap come before the mount (docs/recrawl.md).
      if ((p.recrawler?.refill() ?? 0) > 0) continue;
      // Nothing in memory: look at the mount.
      const allIdleBefore = p.membership.allIdleSince();
      const reseedStart = this.#clock.monotonic();
      this.#lastReseed = reseedStart;
      const full = this.#needFullReseed;
      this.#needFullReseed = false;
      if (full) this.#leftDone.forget();
      let queued: number;
      try {
        // Hand-offs (docs/protocol.md): everything found goes out before this node may say
        // it is idle; what was sent to it comes in with the reseed.
        let handed = 0;
        if (p.handoffs !== undefined) {
          // A file sent now is work for its owner, who may have been seen idle before: this
          // reseed then has not "found nothing". Counted by any flush that wrote it (one the
          // heartbeat started may write this node's batches while this one waits for it).
          const writtenBefore = p.handoffs.outbox.written;
          await p.handoffs.outbox.flush();
          handed += p.handoffs.outbox.written - writtenBefore;
          const h = await p.handoffs.receive(this.#handoffTarget(p), p.membership.liveIds(), full);
          handed += h.queued + h.forwarded;
        }
        const cpu = process.cpuUsage();
        const r = await p.reseeder.reseed(this.#sink(p), full, this.#reseedScope(p, allIdleBefore, reseedStart));
        countDiscovery(this.stats, cpu, 'reseed', r.recordsRead);
        // Batches still waiting to be written (links forwarded now, or sent on by the heartbeat
        // meanwhile) are work too: the next reseed writes them, and this node may not end, nor
        // say idle, before it has (docs/protocol.md, "Hand-offs").
        queued = r.queued + handed + (p.handoffs?.outbox.waiting === true ? 1 : 0);
        if (r.queued > 0) this.#log.info('reseed', { round: this.stats.round + 1, ...r, full });
      } catch (err) {
        this.#onStoreError(err);
        continue;
      }
      if (queued > 0 || this.#busy(p) || p.frontier.nextRetryAt() < Infinity) {
        this.stats.round++;
        this.stats.state = 'crawling';
        p.membership.setState('crawling');
        continue;
      }
      const wasIdle = this.stats.state === 'idle';
      this.stats.state = 'idle';
      p.membership.setState('idle');
      const step = afterEmptyReseed({
        watch: this.#config.watch,
        allIdleBefore,
        reseedStart,
        observations: p.membership.observations,
        wasIdle,
        allIdleNow: p.membership.allIdleSince() !== undefined,
        alone: p.membership.livePeers().length === 0,
        heartbeatMs: this.#config.heartbeatMs,
      });
      if (step.kind === 'complete') {
        if (p.handoffs === undefined || (await peersStill(p.membership))) return { reason: 'complete', exitCode: ExitCode.OK };
        // A peer ended done, or moved, since it was last seen: look again, then reseed (its
        // inbox may hold what this node sent it before it knew).
        this.#heartbeat!.beatSoon();
        await this.#sleep(this.#config.heartbeatMs);
        continue;
      }
      if (!wasIdle && this.#config.watch) {
        this.#log.info(`nothing to do: waiting for seeds (add some with \`mountcrawl seed URL --data ${this.#config.dataDir}\`)`);
      }
      // Peers wait for this node's idle record: publish it now, not at the next heartbeat.
      if (step.publishIdle) this.#heartbeat!.beatSoon();
      if (step.kind === 'wait') await this.#sleep(step.ms);
    }
  }

  /**
   * While requests run (docs/protocol.md, "Hand-offs"): writes the batches of links found for
   * other nodes, and, with room for more requests, reads what others sent to this node, so
   * that it learns of its hosts' new URLs within a fraction of a second, not at the end of
   * its round.
   */
  async #exchangeWhileBusy(p: Parts): Promise<void> {
    const h = p.handoffs!;
    try {
      if (h.outbox.due(HANDOFF_FLUSH_MS)) await h.outbox.flush();
      if (p.requests.inFlight < this.#config.concurrency && !this.#fenced() && !p.guard.fault) {
        const r = await h.receive(this.#handoffTarget(p));
        if (r.queued > 0) p.requests.pump();
      }
    } catch (err) {
      this.#onStoreError(err);
    }
    await this.#sleep(HANDOFF_POLL_MS);
  }

  /** Where received hand-offs go: the admission chain, with the hosts as the frontier holds them. */
  #handoffTarget(p: Parts): HandoffFrontier {
    return { offer: (url, hostDir, depth) => p.admission.offerRanked(url, hostDir, depth), hosts: p.frontier.hosts };
  }

  /** True while something is queued or in flight (queued includes hosts waiting for a lease, a listing or robots.txt). */
  #busy(p: Parts): boolean {
    return p.requests.inFlight > 0 || p.frontier.queued > 0;
  }

  /** Waits `ms` on the node's clock, or until woken (#wakeLoop). */
  #sleep(ms: number): Promise<void> {
    const clock = this.#clock;
    return new Promise((resolve) => {
      const timer = clock.setTimeout(done, ms);
      const self = this;
      function done(): void {
        clock.clearTimeout(timer);
        if (self.#wake === done) self.#wake = undefined;
        resolve();
      }
      this.#wake = done;
    });
  }

  #wakeLoop(): void {
    this.#wake?.();
  }

  /**
   * Which directories a reseed looks at (ReseedScope, docs/protocol.md "Rounds, reseeds and
   * the end of the crawl"). With hand-offs, one that may end the crawl (every live node was
   * seen idle before it began) stats every directory of the hosts this node owns, so the
   * end is decided on everything on the mount; the others (peers still busy) look only at
   * the directories this node has a reason to look at, so an idle node does not stat
   * thousands of directories a second. Under --watch nothing ends the crawl: every
   * OWN_SWEEP_MS a reseed looks at them all.
   */
  #reseedScope(p: Parts, allIdleBefore: number | undefined, now: number): ReseedScope {
    if (p.handoffs === undefined) return 'all';
    const sweep = this.#config.watch ? now - this.#lastOwnSweep >= OWN_SWEEP_MS : allIdleBefore !== undefined;
    if (!sweep) return 'own-unsettled';
    this.#lastOwnSweep = now;
    return 'own';
  }

  /** The node as the reseeder sees it. */
  #sink(p: Parts): ReseedSink {
    return {
      wantsHost: (hostDir) => p.admission.wantsHost(hostDir),
      prepareHosts: async (hostDirs) => {
        for (const dir of hostDirs) p.admission.want(dir);
        await p.keeper.allLoaded();
      },
      addSeed: (raw) => {
        const r = normalizeUrl(raw, undefined, p.normalize);
        if (!r.ok) {
          this.#log.warn('ignoring a seed that is not a crawlable URL', { seed: raw.slice(0, 200), reason: r.reason });
          return undefined;
        }
        this.#scope.addSeed(r.hostDir);
        return { url: r.url, hostDir: r.hostDir };
      },
      offer: (url, hostDir, depth) => p.admission.offerRanked(url, hostDir, depth),
      quiet: (hostDir) => this.#leftDone.isQuiet(hostDir),
    };
  }

  #mayStart(): boolean {
    const p = this.#p;
    if (this.#stopping || p === undefined || p.guard.fault || this.#fenced()) return false;
    if (p.requests.fetched >= this.#config.maxPages) {
      this.#wakeLoop();
      return false;
    }
    return p.requests.inFlight < this.#config.concurrency;
  }

  // ---- faults -----------------------------------------------------------------------------

  /** A failure of the mount stops fetching (MountGuard); anything else is a bug and ends the run. */
  #onStoreError(err: unknown): void {
    if (this.#p?.guard.classify(err) === undefined) {
      if (this.#stopping?.exitCode !== ExitCode.INTERNAL) {
        this.#log.error(`INTERNAL: ${describeError(err)} (a bug: please report it with MOUNTCRAWL_DEBUG=1 output)`);
        if (process.env.MOUNTCRAWL_DEBUG) this.#log.error(String((err as Error).stack));
      }
      this.#stopping ??= { reason: 'stopped', exitCode: ExitCode.INTERNAL, message: `INTERNAL: ${describeError(err)}` };
    }
    this.#wakeLoop();
  }

  /** Probes the mount until it works again; returns the final result when --mount-retry runs out. */
  async #waitOutFault(p: Parts): Promise<RunResult | undefined> {
    while (!this.#stopping) {
      const fault = p.guard.fault!;
      if (p.guard.expired()) {
        return {
          reason: 'mount-failed',
          exitCode: ExitCode.MOUNT,
          message: `${fault.code}: ${fault.message} (gave up after ${Math.round(this.#config.mountRetryMs / 1000)} s)`,
        };
      }
      await this.#sleep(Math.min(2_000, this.#config.heartbeatMs));
      try {
        await p.guard.checkMarker();
        await p.membership.beat(this.#heartbeat!.status('waiting'));
        await p.store.probe();
        if (this.#ownership.partition === 'host') p.keeper.dropLost(await p.leases.verify('all'));
        // Pages fetched but not written when the fault came (temporary files it left go at
        // the next heartbeat, which removes them once its own record is written).
        await p.requests.commitUnwritten();
      } catch {
        continue; // still failing
      }
      p.guard.cleared();
      p.requests.pump();
      return undefined;
    }
    return undefined;
  }

  /**
   * The errs records of the hosts this node held to the end, by host, as it knows them
   * (HostState.errsOnDisk): the end summary counts these instead of reading every record
   * again. Undefined after run() when it knows none for sure (URL partitioning: other nodes
   * write into the same hosts; or it was fenced).
   */
  get heldErrs(): ReadonlyMap<string, HostErrs> | undefined {
    return this.#heldErrs;
  }

  #errsOfHostsHeld(p: Parts): ReadonlyMap<string, HostErrs> | undefined {
    if (this.#ownership.partition !== 'host' || this.#fenced()) return undefined;
    const held = new Map<string, HostErrs>();
    for (const host of p.frontier.hosts.values()) {
      if (host.phase === 'ready' && !host.leaseLost) held.set(host.dir, host.errsOnDisk());
    }
    return held;
  }

  /** `complete`: the crawl ended by the rule (docs/protocol.md, "The end"): the node may leave done. */
  async #shutdown(p: Parts, complete: boolean): Promise<void> {
    this.stats.state = 'stopping';
    this.stats.queued = p.frontier.queued; // what is left, for the run state `status` reads
    await p.requests.drain(STOP_GRACE_MS);
    p.requests.abort();
    await p.requests.drain(2_000);
    await p.recrawler?.flushAll().catch(() => undefined);
    this.#heldErrs = this.#errsOfHostsHeld(p);
    await this.#heartbeat!.close();
    p.frontier.close();
    await this.#warc?.close().catch((err) => this.#log.warn(`warc: the last file was not closed (the next run closes it): ${describeError(err)}`));
    // Best effort: links found but not sent yet. A node that had any cannot leave done (its
    // files may land after its peers' last reading): it leaves lost, and the others reseed fully.
    const unsent = p.handoffs?.outbox.waiting === true;
    await p.handoffs?.outbox.flush().catch(() => undefined);
    // Best effort: on a failed mount these fail too, and others take over after dead-after.
    // No host is taken after this (a take waiting for its turn would take a lease after the release).
    await p.keeper.close(STOP_GRACE_MS);
    await p.leases.releaseAll();
    if (complete) await leaveDone(p, this.#heartbeat!.status('done'), unsent);
    else await p.membership.leave().catch(() => undefined);
    // However it left, its inbox goes if it is empty (docs/protocol.md, "Leaving done").
    await p.handoffs?.inbox.removeOwn();
    // Temporary files a fault left that the mount lets go of now (best effort, never throws).
    await removeLeftTemps();
    p.store.close();
    p.extractor?.close();
    await this.#fetcher.close().catch(() => undefined);
  }
}
