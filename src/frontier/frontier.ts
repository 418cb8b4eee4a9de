import type { Ownership } from '../cluster/ownership.js';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { ScopeFilter } from './scope.js';
import { hasRepeatedSegment, urlShape } from './traps.js';
import type { CrawlStats } from '../progress/stats.js';
import { urlKey } from '../url/key.js';
import type { HostState, QueueItem } from './host-state.js';
import type { OfferResult } from '../crawl/reseeder.js';
import { Ring } from '../util/ring.js';

/** What the frontier needs from the node to start requests. */
export interface Starter {
  /** True while another request may start (room in --concurrency, not stopping, not paused). */
  mayStart(): boolean;
  /** Starts `item` of `host` now. */
  start(host: HostState, item: QueueItem, now: number): void;
  /** Fetches the host's robots.txt (its queue waits for it). */
  fetchRobots(host: HostState): void;
  /** Something changed that the control loop may want to know (work, or none left). */
  wake(): void;
}

export interface FrontierDeps {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  readonly stats: CrawlStats;
  readonly scope: ScopeFilter;
  readonly ownership: Ownership;
  /** The user's --hook filter, wrapped so that it never throws. */
  readonly filter?: (url: string) => boolean;
  /** Starts managing a host this node owns (lease, listing): returns its state at once. */
  readonly adopt: (hostDir: string, url: string) => HostState;
  readonly starter: Starter;
}

/**
 * The in-memory frontier (DESIGN §4): per-host FIFO queues (breadth first by depth) held in
 * HostState, a cap on URLs in memory, retries waiting for their time, and the dispatch loop
 * that starts requests round robin over the hosts that are ready, each host's politeness
 * deciding when it may send again. URLs that do not fit are left on disk.
 */
export class Frontier {
  /** Every host this node manages, by host directory. */
  readonly hosts = new Map<string, HostState>();
  readonly #deps: FrontierDeps;
  readonly #ring = new Ring<HostState>();
  #queued = 0;

  constructor(deps: FrontierDeps) {
    this.#deps = deps;
  }

  /** URLs queued in memory (retries waiting for their time not included). */
  get queued(): number {
    return this.#queued;
  }

  /** True when this node crawls URLs of the host at all (scope and ownership). */
  wantsHost(hostDir: string): boolean {
    return this.#deps.scope.hostInScope(hostDir) && this.#deps.ownership.ownsHost(hostDir);
  }

  /**
   * Takes a URL of a wanted host (the caller checked `wantsHost`) into the frontier if it
   * passes the URL filters, is within the limits, is owned by this node (URL partitioning),
   * and is neither done nor claimed. What is cut is counted (the end summary shows it).
   */
  offer(url: string, hostDir: string, depth: number): OfferResult {
    const { config: cfg, stats } = this.#deps;
    if (depth > cfg.maxDepth) {
      stats.cut.depth++;
      return 'known';
    }
    // Most links a page has were seen before: settle those before the filters below.
    const key = urlKey(url);
    const seen = this.hosts.get(hostDir);
    if (seen !== undefined && (seen.done.has(key) || seen.claimed.has(key))) return 'known';
    if (!this.#deps.scope.accepts(url)) return 'known';
    if (this.#deps.filter !== undefined && !this.#deps.filter(url)) return 'known';
    if (hasRepeatedSegment(url, cfg.maxRepeatedSegments)) {
      stats.cut.repeatedSegment++;
      return 'known';
    }
    if (!this.#deps.ownership.ownsUrl(hostDir, key)) return 'known';
    const host = seen ?? this.#deps.adopt(hostDir, url);
    host.origin ??= originOf(url);
    if (host.phase === 'releasing' || host.gaveUp) return 'known';
    if (host.fetched + host.queued >= cfg.maxPagesPerHost) {
      stats.cut.hostBudget++;
      return 'known';
    }
    const shape = urlShape(url);
    const sameShape = host.shapes.get(shape) ?? 0;
    if (sameShape >= cfg.maxPagesPerPattern) {
      stats.cut.patternBudget++;
      return 'known';
    }
    if (this.#queued >= cfg.frontierCap) {
      stats.cut.frontierFull++;
      return 'full';
    }
    host.shapes.set(shape, sameShape + 1);
    host.claimed.add(key);
    host.push({ url, key, depth });
    this.#queued++;
    if (host.phase === 'ready') this.schedule(host);
    return 'queued';
  }

  /** Puts back an item whose commit failed (it is not done). */
  requeue(host: HostState, item: QueueItem): void {
    host.claimed.add(item.key);
    host.push(item);
    this.#queued++;
  }

  /** Keeps only the queued items of a host for which `keep` is true; returns the others. */
  filterQueue(host: HostState, keep: (item: QueueItem) => boolean): QueueItem[] {
    const dropped = host.filter(keep);
    this.#queued -= dropped.length;
    return dropped;
  }

  /** Empties a host's queue and retries from memory (they are on disk), stops its timers, and returns them all. */
  dropHost(host: HostState): QueueItem[] {
    const dropped = host.drain();
    this.#queued -= dropped.length;
    for (const item of dropped) host.claimed.delete(item.key);
    for (const r of host.retries) host.claimed.delete(r.key);
    this.#stopTimers(host);
    const retries = host.retries.splice(0).map(({ url, key, depth }) => ({ url, key, depth }));
    return [...dropped, ...retries];
  }

  /** A URL that failed transiently is queued again at `dueAt` (monotonic). */
  addRetry(host: HostState, item: QueueItem, dueAt: number): void {
    host.claimed.add(item.key);
    host.retries.push({ ...item, dueAt });
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

  /** Puts a host in the ready ring (if it has work) and starts what may start. */
  schedule(host: HostState): void {
    if (!host.inRing && host.phase === 'ready' && host.queued > 0) {
      host.inRing = true;
      this.#ring.push(host);
    }
    this.pump();
  }

  /** Starts requests while there is room: round robin over ready hosts, politeness per host. */
  pump(): void {
    const { starter, clock } = this.#deps;
    const now = clock.monotonic();
    while (this.#ring.length > 0 && starter.mayStart()) {
      const host = this.#ring.shift()!;
      host.inRing = false;
      if (host.phase !== 'ready' || host.queued === 0) continue;
      if (host.robots === undefined) {
        // Its queue waits for robots.txt; the fetch schedules the host again when it is done.
        if (host.robotsLoading) continue;
        if (now < host.robotsRetryAt) this.#wakeAt(host, host.robotsRetryAt);
        else starter.fetchRobots(host);
        continue;
      }
      const at = host.politeness.nextStartAt(now);
      if (at === Infinity) continue; // full: scheduled again when a request ends
      if (at > now) {
        this.#wakeAt(host, at);
        continue;
      }
      const item = host.shift()!;
      this.#queued--;
      starter.start(host, item, now);
      if (host.queued > 0) {
        host.inRing = true;
        this.#ring.push(host);
      }
    }
  }

  /** Stops every timer (shutdown). */
  close(): void {
    for (const host of this.hosts.values()) this.#stopTimers(host);
  }

  #wakeAt(host: HostState, at: number): void {
    if (host.wakeTimer !== undefined) clearTimeout(host.wakeTimer);
    host.wakeTimer = setTimeout(() => {
      host.wakeTimer = undefined;
      this.schedule(host);
    }, Math.max(1, at - this.#deps.clock.monotonic()));
  }

  #armRetryTimer(host: HostState): void {
    const at = host.nextRetryAt();
    if (at === Infinity) return;
    if (host.retryTimer !== undefined) clearTimeout(host.retryTimer);
    host.retryTimer = setTimeout(() => {
      host.retryTimer = undefined;
      if (host.phase !== 'ready') return;
      this.#queued += host.promoteDueRetries(this.#deps.clock.monotonic());
      this.#armRetryTimer(host);
      this.schedule(host);
      this.#deps.starter.wake();
    }, Math.max(0, at - this.#deps.clock.monotonic()));
  }

  #stopTimers(host: HostState): void {
    if (host.wakeTimer) clearTimeout(host.wakeTimer);
    if (host.retryTimer) clearTimeout(host.retryTimer);
    host.wakeTimer = undefined;
    host.retryTimer = undefined;
  }
}

/** `scheme://authority` of a normalized URL. */
export function originOf(url: string): string {
  const slash = url.indexOf('/', url.indexOf('://') + 3);
  return slash < 0 ? url : url.slice(0, slash);
}
