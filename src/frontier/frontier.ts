import type { Clock, Timer } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { CrawlStats } from '../progress/stats.js';
import { Ring } from '../util/ring.js';
import { HostState } from './host-state.js';
import type { QueueItem } from './host-queue.js';
import type { SpillRoom } from './spill-room.js';

/**
 * URLs a host keeps in memory once the node's queues are over --frontier-memory (or that
 * budget, if lower); its next ones spill. A host whose head is down to a quarter of it takes
 * the next items of its spill file back.
 */
export const SPILL_HEAD = 64;

/** What the frontier tells the node (it calls no other part). */
export interface FrontierEvents {
  /** A host may have work that can start now: the node pumps (RequestRunner.pump). */
  workReady(): void;
  /** A retry came due: the control loop may want to know. */
  wake(): void;
}

export interface FrontierDeps {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  readonly stats: CrawlStats;
  readonly events: FrontierEvents;
  /** Where host queues spill beyond --frontier-memory; without it, every queue stays in memory. */
  readonly spill?: SpillRoom;
}

/** What to start next: a page of a host, or the host's robots.txt (its queue waits for it). */
export type Next =
  | { readonly kind: 'page'; readonly host: HostState; readonly item: QueueItem }
  | { readonly kind: 'robots'; readonly host: HostState };

/**
 * The in-memory frontier (docs/architecture.md): per-host queues held in HostState, ordered
 * by priority (breadth first by depth unless a --hook priority says otherwise: host-queue.ts), a cap on URLs in memory, retries waiting for their time, and
 * the choice of what starts next: round robin over the hosts that are ready, each host's
 * politeness deciding when it may send again. URLs that do not fit (--frontier-cap) are left
 * on disk. What may enter is decided before, by the admission chain (src/frontier/admission/).
 *
 * Memory (docs/protocol.md, "Memory"): once the queues hold --frontier-memory URLs in memory,
 * a host that has `SPILL_HEAD` in memory queues its next URLs in its spill file (HostWork),
 * and takes them back, in order, as its head runs low. So memory holds at most about
 * --frontier-memory URLs plus `SPILL_HEAD` per host, whatever the length of the queues.
 */
export class Frontier {
  readonly #hosts = new Map<string, HostState>();
  readonly #deps: FrontierDeps;
  readonly #ring = new Ring<HostState>();
  /** Hosts in the ready ring. */
  readonly #inRing = new Set<HostState>();
  /** Timers that wake a host when politeness or robots.txt lets it send again. */
  readonly #wakeTimers = new Map<HostState, Timer>();
  /** Timers that queue a host's next retry when it is due. */
  readonly #retryTimers = new Map<HostState, Timer>();
  #queued = 0;
  /** URLs queued in memory (the rest of `#queued` is spilled). */
  #inMemory = 0;
  #closed = false;

  /** URLs a host keeps in memory before it spills (SPILL_HEAD, or less under a smaller budget). */
  readonly #head: number;

  constructor(deps: FrontierDeps) {
    this.#deps = deps;
    this.#head = Math.min(SPILL_HEAD, deps.config.frontierMemory);
  }

  /** Every host this node manages, by host directory. */
  get hosts(): ReadonlyMap<string, HostState> {
    return this.#hosts;
  }

  /**
   * The state of a host, made at its first use (it learns its origin from `url`);
   * `created` when it is new: the host is wanted (Admission.want) and must be taken.
   */
  hostFor(hostDir: string, url: string | undefined): { host: HostState; created: boolean } {
    const existing = this.#hosts.get(hostDir);
    if (existing) return { host: existing, created: false };
    const host = new HostState(hostDir, this.#deps.config);
    if (url !== undefined) host.knowOrigin(url);
    this.#hosts.set(hostDir, host);
    return { host, created: true };
  }

  /** Forgets a host this node let go (after its requests in flight), or a lease no host needed. */
  forget(hostDir: string): void {
    const host = this.#hosts.get(hostDir);
    if (host === undefined) return;
    this.#track(host, () => host.closeSpill());
    this.#hosts.delete(hostDir);
  }

  /** URLs queued, in memory or spilled (retries waiting for their time not included). */
  get queued(): number {
    return this.#queued;
  }

  /** URLs queued in memory. */
  get inMemory(): number {
    return this.#inMemory;
  }

  /** True when another URL fits under --frontier-cap; otherwise counts it as cut (it stays on disk). */
  hasRoom(): boolean {
    if (this.#queued < this.#deps.config.frontierCap) return true;
    this.#deps.stats.cut.frontierFull++;
    return false;
  }

  /** Queues an admitted URL (claiming it) and schedules its host. */
  enqueue(host: HostState, item: QueueItem, first = false): void {
    const room = this.#deps.spill;
    const spill =
      room !== undefined &&
      !this.#closed &&
      !first &&
      (host.spilled > 0 || (this.#inMemory >= this.#deps.config.frontierMemory && host.inMemory >= this.#head));
    if (spill) host.spill(item, () => room.file());
    else {
      host.push(item, first);
      this.#inMemory++;
    }
    this.#queued++;
    if (host.phase === 'ready') this.schedule(host);
  }

  /** Puts back an item whose commit failed (it is not done). */
  requeue(host: HostState, item: QueueItem): void {
    host.push(item);
    this.#queued++;
    this.#inMemory++;
  }

  /** Keeps only the queued items of a host for which `keep` is true; returns the others. */
  filterQueue(host: HostState, keep: (item: QueueItem) => boolean): QueueItem[] {
    return this.#track(host, () => host.filter(keep));
  }

  /** Empties a host's queue (spill file included) and retries from memory (they are on disk), stops its timers, and returns them all. */
  dropHost(host: HostState): QueueItem[] {
    const dropped = this.#track(host, () => host.drain());
    this.#stopTimers(host);
    return dropped;
  }

  /** Runs `change` on a host's queue and keeps the counts of queued URLs in step with it. */
  #track<T>(host: HostState, change: () => T): T {
    const queued = host.queued;
    const inMemory = host.inMemory;
    const result = change();
    this.#queued += host.queued - queued;
    this.#inMemory += host.inMemory - inMemory;
    return result;
  }

  /** A URL that failed transiently is queued again at `dueAt` (monotonic). */
  addRetry(host: HostState, item: QueueItem, dueAt: number): void {
    host.addRetry(item, dueAt);
    this.#armRetryTimer(host);
  }

  /** Monotonic time of the earliest retry of a ready host, or Infinity. */
  nextRetryAt(): number {
    let t = Infinity;
    for (const host of this.hosts.values()) if (host.phase === 'ready') t = Math.min(t, host.nextRetryAt());
    return t;
  }

  /** Hosts whose lease and listing are done. */
  readyCount(): number {
    let n = 0;
    for (const h of this.hosts.values()) if (h.phase === 'ready') n++;
    return n;
  }

  /** Puts a host in the ready ring (if it has work) and tells the node that work may start. */
  schedule(host: HostState): void {
    if (!this.#inRing.has(host) && host.phase === 'ready' && host.queued > 0) {
      this.#inRing.add(host);
      this.#ring.push(host);
    }
    this.#deps.events.workReady();
  }

  /**
   * What may start at `now`, round robin over ready hosts, politeness per host; undefined
   * when nothing may (hosts that must wait get a timer that schedules them again).
   */
  next(now: number): Next | undefined {
    while (this.#ring.length > 0) {
      const host = this.#ring.shift()!;
      this.#inRing.delete(host);
      if (host.phase !== 'ready' || host.queued === 0) continue;
      if (host.robots === undefined) {
        // Its queue waits for robots.txt; the fetch schedules the host again when it is done.
        if (host.robotsLoading) continue;
        if (now < host.robotsRetryAt) {
          this.#wakeAt(host, host.robotsRetryAt);
          continue;
        }
        return { kind: 'robots', host };
      }
      const at = host.politeness.nextStartAt(now);
      if (at === Infinity) continue; // full: scheduled again when a request ends
      if (at > now) {
        this.#deps.stats.heldBack(host.politeness.limit(now), now);
        this.#wakeAt(host, at);
        continue;
      }
      if (host.inMemory <= this.#head >> 2 && host.spilled > 0) this.#inMemory += host.unspill();
      const item = host.shift()!;
      this.#queued--;
      this.#inMemory--;
      if (host.queued > 0) {
        this.#inRing.add(host);
        this.#ring.push(host);
      }
      return { kind: 'page', host, item };
    }
    return undefined;
  }

  /** Stops every timer and removes the spill files (shutdown); nothing spills after it. */
  close(): void {
    for (const host of this.hosts.values()) {
      this.#stopTimers(host);
      this.#track(host, () => host.closeSpill());
    }
    this.#deps.spill?.close();
    this.#closed = true;
  }

  #wakeAt(host: HostState, at: number): void {
    const { clock } = this.#deps;
    clock.clearTimeout(this.#wakeTimers.get(host));
    const timer = clock.setTimeout(
      () => {
        this.#wakeTimers.delete(host);
        this.schedule(host);
      },
      Math.max(1, at - clock.monotonic()),
    );
    this.#wakeTimers.set(host, timer);
  }

  #armRetryTimer(host: HostState): void {
    const { clock } = this.#deps;
    const at = host.nextRetryAt();
    if (at === Infinity) return;
    clock.clearTimeout(this.#retryTimers.get(host));
    const timer = clock.setTimeout(
      () => {
        this.#retryTimers.delete(host);
        if (host.phase !== 'ready') return;
        const moved = host.promoteDueRetries(clock.monotonic());
        this.#queued += moved;
        this.#inMemory += moved;
        this.#armRetryTimer(host);
        this.schedule(host);
        this.#deps.events.wake();
      },
      Math.max(0, at - clock.monotonic()),
    );
    this.#retryTimers.set(host, timer);
  }

  #stopTimers(host: HostState): void {
    const { clock } = this.#deps;
    clock.clearTimeout(this.#wakeTimers.get(host));
    clock.clearTimeout(this.#retryTimers.get(host));
    this.#wakeTimers.delete(host);
    this.#retryTimers.delete(host);
  }
}
