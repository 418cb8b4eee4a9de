import type { SelfStatus } from '../cluster/membership.js';
import type { Ownership } from '../cluster/ownership.js';
import type { Clock, Timer } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import { removeLeftTemps } from '../store/left-temps.js';
import { sweepStaleTemps } from '../store/temp-sweeper.js';
import { DeadWarcSweeper } from '../warc/dead-writer-repair.js';
import type { HostState } from '../frontier/host-state.js';
import { chooseLends, demand, lendingShare, MAX_LENDS_PER_BEAT, MAX_LENT, spareSlots } from './host-lending.js';
import type { Parts } from './node-parts.js';

/** Every how many heartbeats stale temp files in shared directories are swept. */
const SWEEP_EVERY = 300;

/**
 * How often an idle node reads the records of the last peers still at work (docs/protocol.md,
 * "The end"): a quarter of the heartbeat, within these bounds, when at most END_WATCH_PEERS
 * are (with more, the next heartbeat comes before the last of them is done).
 */
export const END_WATCH_MIN_MS = 50;
export const END_WATCH_MAX_MS = 250;
export const END_WATCH_PEERS = 3;

/**
 * The first heartbeats come a quarter heartbeat apart (docs/protocol.md, "Nodes and
 * liveness"): nodes started together see each other within a fraction of a heartbeat, so a
 * node that came up first and took every host hands them on that much sooner.
 */
export const STARTUP_BEATS = 4;

/** What the heartbeat tells the node that runs it. */
export interface HeartbeatEvents {
  /** True once the node is stopping (its record says so). */
  stopping(): boolean;
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
  /** Whether every live node was idle at the last heartbeat. */
  #allIdleSeen = false;
  #closed = false;
  /** Closes WARC files left open by nodes that died, on any machine (docs/warc.md). */
  #warcSweeper: DeadWarcSweeper | undefined;
  /** Peer id -> its record counter when this node last lent it a host (#lendSurplus). */
  readonly #lentAt = new Map<string, number>();

  constructor(deps: HeartbeatDeps) {
    this.#d = deps;
  }

  /** Starts beating every --heartbeat (the first STARTUP_BEATS sooner). */
  start(): void {
    this.#schedule(this.#nextBeatMs());
  }

  #nextBeatMs(): number {
    const ms = this.#d.config.heartbeatMs;
    return this.#ticks < STARTUP_BEATS ? ms / 4 : ms;
  }

  /** Runs the next heartbeat now rather than when it is due (unless one is running). */
  beatSoon(): void {
    if (this.#closed || this.#running !== undefined) return;
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

  /** What this node says about itself in its record. */
  status(state: string): SelfStatus {
    const { stats, parts, config, ownership } = this.#d;
    const lent = ownership.ownLends();
    const used = demand(this.#loads(), config.perHost);
    return {
      state: state as SelfStatus['state'],
      round: stats.round,
      hostsOwned: parts.frontier.readyCount(),
      pages: stats.pages,
      errors: stats.errorCount,
      queued: parts.frontier.queued,
      inFlight: parts.requests.inFlight,
      rate: Math.round(stats.rate() * 10) / 10,
      spare: spareSlots(config.concurrency, used),
      wanting: Math.max(0, used - config.concurrency),
      ...(lent && { lent }),
    };
  }

  /** The hosts that take or will take request slots: all but those on their way out or blocked by another's lease. */
  *#loads(): Iterable<{ dir: string; queued: number; inFlight: number }> {
    for (const h of this.#d.parts.frontier.hosts.values()) {
      if (h.phase === 'releasing' || h.phase === 'blocked') continue;
      yield { dir: h.dir, queued: h.queued, inFlight: h.politeness.inFlight };
    }
  }

  /**
   * Lending hosts (docs/protocol.md, "Lending hosts"): when this node's hosts want more
   * request slots than it has, and more than the cluster's even balance (lendingShare), it
   * lends hosts waiting for one (owned by rendezvous, lease held, nothing in flight, queue
   * long enough) to live peers whose records say they are below that balance, at most once
   * per two of a peer's heartbeats. Each lent host's queue goes into the outbox at once, in a
   * file to the borrower that names the lend as of the next record (so that a mount that fails
   * now loses nothing: the outbox keeps what it could not write), and the host is let go (its
   * lease released) before that record is written.
   * Returns how many hosts it lent.
   */
  async #lendSurplus(): Promise<number> {
    const { config, ownership, stats, events } = this.#d;
    const p = this.#d.parts;
    const handoffs = p.handoffs;
    if (config.lend === false || ownership.partition !== 'host' || handoffs === undefined) return 0;
    if (this.#ticks <= STARTUP_BEATS || this.fenced() || events.stopping() || p.guard.fault || p.requests.unwritten > 0) return 0;
    // A link that did not fit in memory is found again by this node's reseeds of its own records: it stays put.
    if (stats.cut.frontierFull > 0 || ownership.lentCount >= MAX_LENT) return 0;
    const balance = demand(this.#loads(), config.perHost) - config.concurrency;
    if (balance <= 0) return 0;
    const peers = p.membership.livePeers().filter((r) => r.state === 'crawling' || r.state === 'idle' || r.state === 'waiting');
    const { surplus, peers: share } = lendingShare(config.nodeId, [
      { id: config.nodeId, balance, canBorrow: false },
      ...peers.map((r) => {
        const at = this.#lentAt.get(r.id);
        return { id: r.id, balance: (r.wanting ?? 0) - (r.spare ?? 0), canBorrow: at === undefined || r.counter >= at + 2 };
      }),
    ]);
    if (share.length === 0) return 0;
    const hosts: HostState[] = [];
    for (const h of p.frontier.hosts.values()) {
      if (h.phase !== 'ready' || h.politeness.inFlight > 0 || h.retries.length > 0 || h.robots === undefined || h.leaseLost) continue;
      if (ownership.rendezvousOwner(h.dir) === config.nodeId) hosts.push(h);
    }
    const chosen = chooseLends({
      surplus,
      perHost: config.perHost,
      hosts,
      peers: share,
      most: Math.min(MAX_LENDS_PER_BEAT, MAX_LENT - ownership.lentCount),
    });
    const released: Promise<void>[] = [];
    for (const { host: dir, borrower } of chosen) {
      const host = p.frontier.hosts.get(dir)!;
      const items = p.frontier.dropHost(host);
      ownership.lend(dir, borrower);
      handoffs.lent(borrower, dir, items, p.membership.counter + 1);
      released.push(p.keeper.letGo(host, 'moved'));
      this.#lentAt.set(borrower, p.membership.recordOf(borrower)?.counter ?? 0);
    }
    if (chosen.length === 0) return 0;
    this.#d.log.info('lent hosts', { hosts: chosen.length, to: [...new Set(chosen.map((l) => l.borrower))].join(' ') });
    stats.hostsLent += chosen.length;
    await Promise.all(released);
    return chosen.length;
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

  /** True when this node has not reached the mount for long enough that others may count it dead. */
  fenced(): boolean {
    const { clock, config, parts } = this.#d;
    return clock.monotonic() - parts.membership.lastBeatOk > config.deadAfterMs / 2;
  }

  #schedule(delayMs: number): void {
    this.#timer = this.#d.clock.setTimeout(() => {
      this.#running = this.#tick().finally(() => {
        this.#running = undefined;
        if (this.#closed) return;
        this.#schedule(this.#nextBeatMs());
        this.#watchLastPeers();
      });
    }, delayMs);
  }

  /**
   * The end of a crawl, sooner (docs/protocol.md, "The end"): while this node is idle and a
   * few live peers are still at work, read their records every quarter heartbeat (small
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
    const every = Math.min(END_WATCH_MAX_MS, Math.max(END_WATCH_MIN_MS, config.heartbeatMs / 4));
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
    }, every);
  }

  /** One heartbeat: marker, own record, others' records, ownership, leases, housekeeping. */
  async #tick(): Promise<void> {
    const { config, log, stats, ownership, events } = this.#d;
    const p = this.#d.parts;
    const started = this.#d.clock.monotonic();
    try {
      this.#ticks++;
      const wasFenced = this.fenced();
      await p.guard.checkMarker();
      const lent = await this.#lendSurplus();
      await p.membership.beat(this.status(events.stopping() ? 'stopping' : stats.state));
      // The lent hosts' queues go now, after the record that names the lends: borrowers wait for them.
      if (lent > 0) await p.handoffs?.outbox.flush();
      // The mount takes writes: temporary files a fault left (a write that failed and could
      // not be removed then, this heartbeat's own among them) go now.
      await removeLeftTemps();
      const liveBefore = p.membership.liveIds();
      const changed = await p.membership.observe();
      const lentBefore = ownership.lendsInForce();
      this.#warcSweeper ??= new DeadWarcSweeper({
        dir: p.layout.warc(),
        selfId: config.nodeId,
        liveness: p.membership,
        log,
        everyTicks: Math.max(1, Math.round(config.deadAfterMs / 2 / config.heartbeatMs)),
      });
      this.#warcSweeper.tick();
      const departed = p.membership.takeDepartures();
      stats.nodesAlive = p.membership.liveIds().length;
      stats.queued = p.frontier.queued;
      stats.inFlight = p.requests.inFlight;
      const lendsChanged = ownership.setPeerLends(p.membership.livePeers());
      if (changed) {
        const before = ownership.liveCount;
        ownership.setLive(p.membership.liveIds());
        this.#sendOnMovedQueues();
        log.info('nodes changed', { alive: ownership.liveCount });
        // Hosts gained from nodes that left done need no full reseed (docs/protocol.md, "Leaving done").
        if (p.keeper.rebalance(before)) {
          if (departed.lost.length === 0 && p.handoffs !== undefined && departed.done.length > 0) events.leftDone(liveBefore, departed.done, lentBefore);
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
      // The last peer just went idle: an idle node's next reseed may end the crawl, so now.
      const allIdle = p.membership.allIdleSince() !== undefined;
      if (allIdle && !this.#allIdleSeen && stats.state === 'idle') events.wake();
      this.#allIdleSeen = allIdle;
      if (ownership.partition === 'host') {
        p.keeper.dropLost(await p.leases.verify(changed || wasFenced ? 'all' : 'some'));
        p.keeper.retryBlocked();
        await p.keeper.releaseOrphanLeases();
      }
      if (wasFenced) log.info('reached the mount again');
      const serverNow = p.membership.serverTime?.mtimeMs;
      if (this.#ticks % SWEEP_EVERY === 1 && serverNow !== undefined) {
        const removed = await sweepStaleTemps(p.layout, serverNow, 10 * config.deadAfterMs);
        if (removed > 0) log.info('removed stale temp files', { count: removed });
      }
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
