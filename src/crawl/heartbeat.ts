import type { SelfStatus } from '../cluster/self-record.js';
import type { Ownership } from '../cluster/ownership.js';
import type { Clock, Timer } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import { sweepStaleTemps } from '../store/temp-sweeper.js';
import { DeadWarcSweeper } from '../warc/dead-writer-repair.js';
import { demand, spareSlots } from './host-lending.js';
import type { Parts } from './node-parts.js';
import { SelfFence } from './self-fence.js';
import { hostLoads, SurplusLender } from './surplus-lender.js';

/** Every how many heartbeats stale temp files in shared directories are swept. */
const SWEEP_EVERY = 300;

/**
 * Timing only, not the rule (docs/protocol.md, "Nodes and liveness" and "Rounds, reseeds and the end of the crawl"): the
 * first STARTUP_BEATS heartbeats come a quarter heartbeat apart; an idle node reads the records of the last END_WATCH_PEERS
 * peers at work at the end's pace (a quarter heartbeat within END_WATCH_MIN_MS and END_WATCH_MAX_MS: a tenth by default),
 * and beats that often, at most END_BEATS in a row, while it sees every live node idle (the end rule's records, sooner).
 */
export const END_WATCH_MIN_MS = 50;
export const END_WATCH_MAX_MS = 100;
export const END_WATCH_PEERS = 3;
export const STARTUP_BEATS = 4;
export const END_BEATS = 20;

/** What the heartbeat tells the node that runs it. */
export interface HeartbeatEvents {
  /** True once the node is stopping (its record says so); draining: it stops because it was drained. */
  stopping(): boolean;
  draining?(): boolean;
  /** Reads the control file (docs/protocol.md, "The control file") at the end of each beat; true when it asked a change (the node beats again at once). */
  lookAtControl?(): Promise<boolean>;
  /** The live set changed and hosts may have come this node's way: the next reseed reads everything. */
  needFullReseed(): void;
  /** Nodes left done (docs/protocol.md, "Leaving done"): `before` is the live set as it was, `lentBefore` the lends in force then. */
  leftDone(before: readonly string[], done: readonly string[], lentBefore: ReadonlyMap<string, string>): void;
  /** Something the control loop acts on changed (nodes, all idle). */
  wake(): void;
  onStoreError(err: unknown): void;
}

export interface HeartbeatDeps {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly stats: CrawlStats;
  readonly ownership: Ownership;
  readonly parts: Parts;
  readonly events: HeartbeatEvents;
}

/**
 * A node's heartbeat (docs/protocol.md, "Nodes"): every --heartbeat it checks the data
 * directory's marker, rewrites its own record, reads the others', updates ownership (and
 * lets go of hosts that moved), verifies its leases, and sweeps stale temp files now and then.
 */
export class Heartbeat {
  readonly #d: HeartbeatDeps;
  #timer: Timer | undefined;
  /** Reads the last busy peer's record between heartbeats (#watchLastPeers). */
  #endTimer: Timer | undefined;
  /** The heartbeat in progress: close() waits for it, so it cannot rewrite the record after leave(). */
  #running: Promise<void> | undefined;
  #ticks = 0;
  #endBeats = 0; // beats at the end's pace in a row while every live node is idle (END_BEATS)
  /** Whether the end rule's view held at the last heartbeat: every live node idle, every peer's record written since. */
  #endableSeen = false;
  #settledSeen = false;
  /** Whether this node may act on its hosts (docs/protocol.md, "Self-fencing"). */
  readonly fence: SelfFence;
  #closed = false;
  /** start() was called: before it, a beatSoon() (a sibling's nudge while this node joins) does nothing. */
  #started = false;
  /** Closes WARC files left open by nodes that died, on any machine (docs/warc.md). */
  #warcSweeper: DeadWarcSweeper | undefined;
  /** Lends hosts when this node has more work than request slots (docs/protocol.md, "Lending hosts"). */
  readonly #lender: SurplusLender;

  constructor(deps: HeartbeatDeps) {
    this.#d = deps;
    this.fence = new SelfFence(deps.clock, deps.config, () => deps.parts.membership.lastBeatOk);
    this.#lender = new SurplusLender({ ...deps, stopping: () => deps.events.stopping(), fenced: () => this.fenced() });
  }

  /** Starts beating every --heartbeat (the first STARTUP_BEATS sooner). */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#schedule(this.#nextBeatMs());
  }

  #nextBeatMs(): number {
    const { config, stats, parts } = this.#d;
    if (this.#ticks < STARTUP_BEATS) return config.heartbeatMs / 4;
    const ending = !config.watch && stats.state === 'idle' && parts.membership.allIdleSince() !== undefined;
    this.#endBeats = ending ? this.#endBeats + 1 : 0;
    return ending && this.#endBeats <= END_BEATS ? this.#endPaceMs() : config.heartbeatMs;
  }

  #endPaceMs(): number {
    return Math.min(END_WATCH_MAX_MS, Math.max(END_WATCH_MIN_MS, this.#d.config.heartbeatMs / 4));
  }

  /** Runs the next heartbeat now rather than when it is due (unless one is running). */
  beatSoon(): void {
    if (!this.#started || this.#closed || this.#running !== undefined) return;
    this.#d.clock.clearTimeout(this.#timer);
    this.#schedule(0);
  }

  /** Stops beating; waits for a heartbeat in progress. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#d.clock.clearTimeout(this.#timer);
    this.#d.clock.clearTimeout(this.#endTimer);
    await this.#running;
    await this.#warcSweeper?.close();
  }

  /** What this node says about itself in its record; its state by default: `stopping` (or `draining`) once it stops. */
  status(state?: string): SelfStatus {
    const { stats, parts, config, ownership, events } = this.#d;
    state ??= events.stopping() ? (events.draining?.() ? 'draining' : 'stopping') : stats.state;
    const lent = ownership.ownLends();
    const used = demand(hostLoads(this.#d.parts.frontier), config.perHost);
    return {
      state: state as SelfStatus['state'],
      round: stats.round,
      hostsOwned: parts.frontier.readyCount(),
      pages: stats.pages,
      errors: stats.failureCount,
      excluded: stats.exclusionCount,
      queued: parts.frontier.queued,
      inFlight: parts.requests.inFlight,
      rate: Math.round(stats.rate() * 10) / 10,
      spare: spareSlots(config.concurrency, used),
      wanting: Math.max(0, used - config.concurrency),
      ...(lent && { lent }),
    };
  }

  /**
   * Ownership moved (the live set, or a lend): the queued URLs of hosts this node no longer
   * owns go to their new owner, who would not read the records they came from
   * (docs/protocol.md, "Hand-offs"); the keeper lets the hosts go after this.
   */
  #sendOnMovedQueues(): void {
    const { ownership } = this.#d;
    const p = this.#d.parts;
    if (p.handoffs === undefined) return;
    p.handoffs.viewChanged();
    for (const host of [...p.frontier.hosts.values()]) {
      if (host.phase !== 'releasing' && !ownership.ownsHost(host.dir)) p.handoffs.moved(host.dir, p.frontier.dropHost(host));
    }
  }

  /** True when this node may be counted dead by others, or was a moment ago (SelfFence). */
  fenced(): boolean {
    return this.fence.fenced();
  }

  /**
   * The next beat, in one chain only: a second chain's timer, unknown to close(), would write the
   * record again after the node left (a `stopping` record left behind by a node that exited 0).
   */
  #schedule(delayMs: number): void {
    this.#d.clock.clearTimeout(this.#timer);
    this.#timer = this.#d.clock.setTimeout(() => {
      this.#timer = undefined;
      if (this.#closed || this.#running !== undefined) return;
      this.#running = this.#tick().finally(() => {
        this.#running = undefined;
        if (this.#closed) return;
        this.#schedule(this.#nextBeatMs());
        this.#watchLastPeers();
      });
    }, delayMs);
  }

  /**
   * The end of a crawl, sooner (docs/protocol.md, "Rounds, reseeds and the end of the crawl"): while this node is idle and a
   * few live peers are still at work, read their records at the end's pace (small
   * reads, nothing written or listed) and beat at once when one says idle or done, or is
   * gone, instead of learning it at the next heartbeat. Timing only: the heartbeat decides.
   */
  #watchLastPeers(): void {
    const { clock, config, stats, parts } = this.#d;
    clock.clearTimeout(this.#endTimer);
    this.#endTimer = undefined;
    if (config.watch || stats.state !== 'idle') return;
    const peers = parts.membership.lastBusyPeers(END_WATCH_PEERS);
    if (peers === undefined) return;
    this.#endTimer = clock.setTimeout(() => {
      this.#endTimer = undefined;
      void Promise.all(peers.map((id) => parts.membership.peerStateMoved(id))).then(
        (moved) => {
          if (this.#closed || this.#running !== undefined) return;
          if (moved.includes(true)) this.beatSoon();
          else this.#watchLastPeers();
        },
        () => undefined, // a read that failed: the next heartbeat looks again
      );
    }, this.#endPaceMs());
  }

  /** One heartbeat: marker, own record, others' records, ownership, leases, housekeeping. */
  async #tick(): Promise<void> {
    const { config, log, stats, ownership, events } = this.#d;
    const p = this.#d.parts;
    const started = this.#d.clock.monotonic();
    try {
      this.#ticks++;
      await p.guard.checkMarker();
      const wasFenced = this.fence.beforeRecord();
      await p.membership.beat(this.status());
      this.fence.recordOut();
      // The mount takes writes: temporary files a fault left (a write that failed and could
      // not be removed then, this heartbeat's own among them) go now.
      await p.layout.mount.temps.removeLeft();
      const liveBefore = p.membership.liveIds();
      const changed = await p.membership.observe();
      const lentBefore = ownership.lendsInForce();
      // WARC files are written on the real file system only (CrawlNodeDeps.fs).
      if (p.layout.mount.native)
        this.#warcSweeper ??= new DeadWarcSweeper({
          dir: p.layout.warc(),
          selfId: config.nodeId,
          liveness: p.membership,
          log,
          everyTicks: Math.max(1, Math.round(config.deadAfterMs / 2 / config.heartbeatMs)),
        });
      this.#warcSweeper?.tick();
      const departed = p.membership.takeDepartures();
      stats.nodesAlive = p.membership.liveIds().length;
      stats.queued = p.frontier.queued;
      stats.inFlight = p.requests.inFlight;
      const lendsChanged = ownership.setPeerLends(p.membership.livePeers());
      if (changed) {
        const before = ownership.liveCount;
        ownership.setLive(p.membership.liveIds(), departed.lost);
        this.#sendOnMovedQueues();
        log.debug('nodes changed', { alive: ownership.liveCount });
        // Hosts gained from nodes that left done need no full reseed (docs/protocol.md, "Leaving done").
        if (p.keeper.rebalance(before)) {
          if (departed.lost.length === 0 && p.handoffs !== undefined && departed.done.length > 0)
            events.leftDone(liveBefore, departed.done, lentBefore);
          else events.needFullReseed();
        }
        events.wake();
      } else if (lendsChanged && p.handoffs !== undefined) {
        // A peer lent a host or took a lend back (docs/protocol.md, "Lending hosts"): hosts
        // this node holds and no longer owns go as on a change of the live set. No reseed:
        // a lend moves a host between live nodes, and its queue goes with it.
        this.#sendOnMovedQueues();
        p.keeper.rebalance(ownership.liveCount);
        events.wake();
      }
      // Every live node idle, and each peer wrote a record since: an idle node's next reseed may end the crawl, so now;
      // and again once each peer says it settled in this node's view (its next reseed may be the last).
      const idleSince = p.membership.allIdleSince() ?? Infinity;
      const endable = idleSince < Infinity && p.membership.peersWroteAfter() >= idleSince;
      const settled = endable && p.membership.view().peersSettled;
      if (((endable && !this.#endableSeen) || (settled && !this.#settledSeen)) && stats.state === 'idle') events.wake();
      this.#endableSeen = endable;
      this.#settledSeen = settled;
      await this.fence.readLeasesBack(async () => {
        if (ownership.partition !== 'host') return;
        p.keeper.dropLost(await p.leases.verify(changed || wasFenced ? 'all' : 'some'));
        p.keeper.retryBlocked();
        await p.keeper.releaseOrphanLeases();
      });
      // Lending on the records just read (no lending in the first heartbeats: nodes started
      // together have not seen each other yet). The record that names the lends is written
      // at once, then the lent hosts' queues: borrowers wait for them.
      if (this.#ticks > STARTUP_BEATS && (await this.#lender.lend()) > 0) {
        await p.membership.beat(this.status());
        await p.handoffs?.outbox.flush();
      }
      if (wasFenced && !this.fenced()) log.info('reached the mount again');
      const serverNow = p.membership.serverTime?.mtimeMs;
      // And at once when a node was lost: what it was writing when it was killed goes before the crawl may end.
      if ((this.#ticks % SWEEP_EVERY === 1 || departed.lost.length > 0) && serverNow !== undefined) {
        const removed = await sweepStaleTemps(p.layout, serverNow, 10 * config.deadAfterMs, (id) => p.membership.isGone(id));
        if (removed > 0) log.debug('removed stale temp files', { count: removed });
      }
      if (await events.lookAtControl?.()) await p.membership.beat(this.status());
      p.requests.pump();
    } catch (err) {
      events.onStoreError(err);
    } finally {
      const ms = this.#d.clock.monotonic() - started;
      stats.heartbeats.beats++;
      stats.heartbeats.totalMs += ms;
      stats.heartbeats.maxMs = Math.max(stats.heartbeats.maxMs, ms);
    }
  }
}
