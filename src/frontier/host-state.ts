import { Politeness, type PolitenessRules } from './politeness.js';
import type { RobotsRules } from '../fetch/robots.js';
import type { ErrsRecord } from '../store/records.js';
import { KeySet } from '../url/key-set.js';
import { Ring } from '../util/ring.js';

/** A URL waiting in a host's queue. */
export interface QueueItem {
  readonly url: string;
  readonly key: string;
  readonly depth: number;
}

/** A URL that failed transiently and waits for its next attempt. */
export interface RetryItem extends QueueItem {
  /** Monotonic time of the next attempt. */
  readonly dueAt: number;
}

/**
 * Where a host stands in this node:
 * `acquiring` its lease; `blocked` by a live holder; `loading` its listing; `ready` to crawl;
 * `releasing` after ownership moved away (in-flight requests finish, then the lease goes).
 */
export type HostPhase = 'acquiring' | 'blocked' | 'loading' | 'ready' | 'releasing';

/**
 * Everything one node keeps in memory about one host it crawls (DESIGN §3): the done set
 * (from one listing when the host was taken, then kept up to date by this node, the only
 * writer), the queue, the retries, the politeness state and robots rules.
 */
export class HostState {
  readonly dir: string;
  phase: HostPhase = 'acquiring';
  readonly politeness: Politeness;
  /** Keys with a links record or a final errs record (64-bit fingerprints: see KeySet). */
  readonly done = new KeySet();
  /** Errs records that are not final, by key: attempts so far. */
  readonly errs = new Map<string, ErrsRecord>();
  /** Keys queued, retrying or in flight: claimed by this node. */
  readonly claimed = new Set<string>();
  readonly retries: RetryItem[] = [];
  readonly #queue = new Ring<QueueItem>();
  /** Robots rules once known; undefined while not fetched yet. */
  robots: RobotsRules | undefined;
  /** Pages fetched from this host in this run (--max-pages-per-host). */
  fetched = 0;
  /** Pages queued per URL shape in this run (--max-pages-per-pattern). */
  readonly shapes = new Map<string, number>();
  /** `scheme://host[:port]` of the host's pages (robots.txt is fetched there). */
  origin: string | undefined;
  /** Settles when the lease and listing step is over (whatever its outcome). */
  loaded: Promise<void> = Promise.resolve();
  robotsLoading = false;
  /** Consecutive times robots.txt was unavailable. */
  robotsFailures = 0;
  /** Monotonic time before which robots.txt is not asked for again. */
  robotsRetryAt = 0;
  /** True once another node took the host's lease: nothing more may be written for it. */
  leaseLost = false;
  /** True when robots.txt stayed unavailable: the host is left alone for this run. */
  gaveUp = false;
  /** True while the host sits in the scheduler's ready ring. */
  inRing = false;
  wakeTimer: NodeJS.Timeout | undefined;
  retryTimer: NodeJS.Timeout | undefined;
  /** Called once when the last in-flight request ends (to release a host that moved). */
  onIdle: (() => Promise<void>) | undefined;

  constructor(dir: string, rules: PolitenessRules) {
    this.dir = dir;
    this.politeness = new Politeness(rules);
  }

  get queued(): number {
    return this.#queue.length;
  }

  push(item: QueueItem): void {
    this.#queue.push(item);
  }

  shift(): QueueItem | undefined {
    return this.#queue.shift();
  }

  /** Removes every queued item (ownership moved, or the host is out of budget); returns them. */
  drain(): QueueItem[] {
    return this.#queue.drain();
  }

  /** Keeps only the queued items for which `keep` is true; returns the others. */
  filter(keep: (item: QueueItem) => boolean): QueueItem[] {
    const dropped: QueueItem[] = [];
    for (const item of this.#queue.drain()) {
      if (keep(item)) this.#queue.push(item);
      else dropped.push(item);
    }
    return dropped;
  }

  /** Moves retries whose time has come into the queue; returns how many. */
  promoteDueRetries(now: number): number {
    let moved = 0;
    for (let i = this.retries.length - 1; i >= 0; i--) {
      const r = this.retries[i]!;
      if (r.dueAt <= now) {
        this.retries.splice(i, 1);
        this.#queue.push({ url: r.url, key: r.key, depth: r.depth });
        moved++;
      }
    }
    return moved;
  }

  /** Monotonic time of the earliest retry, or Infinity. */
  nextRetryAt(): number {
    let t = Infinity;
    for (const r of this.retries) t = Math.min(t, r.dueAt);
    return t;
  }
}
