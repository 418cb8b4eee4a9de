import type { Timer } from '../config/clock.js';
import type { RobotsRules } from '../fetch/robots.js';
import type { ErrsRecord } from '../store/records.js';
import { KeySet } from '../url/key-set.js';
import { ErrsTally, type HostErrs } from '../store/errs-tally.js';
import { HostQueue, type QueueItem, type RetryItem } from './host-queue.js';
import { Politeness, type PolitenessRules } from './politeness.js';

/**
 * Where a host stands in this node:
 * `acquiring` its lease; `blocked` by a live holder; `loading` its listing; `ready` to crawl;
 * `releasing` after ownership moved away (in-flight requests finish, then the lease goes).
 * `releasing` is final: a host let go is never taken up again by the same HostState.
 */
export type HostPhase = 'acquiring' | 'blocked' | 'loading' | 'ready' | 'releasing';

/**
 * Everything one node keeps in memory about one host it crawls (docs/architecture.md): the
 * done set (from one listing when the host was taken, then kept up to date by this node, the
 * only writer), the claims, the queue, the retries, the politeness state and robots rules.
 *
 * Its invariants are kept here, through methods: a key is claimed while it is queued,
 * retrying or in flight, and a claimed key is neither done nor offered again; a done key is
 * never claimed; `releasing` is the last phase.
 */
export class HostState {
  readonly dir: string;
  readonly politeness: Politeness;
  /** Keys with a links record or a final errs record (64-bit fingerprints: see KeySet). */
  readonly #done = new KeySet();
  /** Keys queued, retrying or in flight: claimed by this node. */
  readonly #claimed = new Set<string>();
  readonly #retries: RetryItem[] = [];
  readonly #queue = new HostQueue();
  readonly #shapes = new Map<string, number>();
  /** Errs records that are not final, by key: attempts so far. */
  readonly #errs = new Map<string, ErrsRecord>();
  /** Every errs record of the host on disk, as far as this node knows (for the end summary). */
  readonly #errsOnDisk = new ErrsTally();
  #phase: HostPhase = 'acquiring';
  #fetched = 0;
  #origin: string | undefined;
  #robots: RobotsRules | undefined;
  #robotsLoading = false;
  #robotsFailures = 0;
  #robotsRetryAt = 0;
  #leaseLost = false;
  #gaveUp = false;
  /** Settles when the lease and listing step is over (whatever its outcome). */
  loaded: Promise<void> = Promise.resolve();
  /** The frontier's: true while the host sits in its ready ring. */
  inRing = false;
  /** The frontier's: wakes the host when politeness or robots.txt lets it send again. */
  wakeTimer: Timer | undefined;
  /** The frontier's: queues the next retry when it is due. */
  retryTimer: Timer | undefined;
  /** Called once when the last in-flight request ends (to release a host that moved). */
  onIdle: (() => Promise<void>) | undefined;

  constructor(dir: string, rules: PolitenessRules) {
    this.dir = dir;
    this.politeness = new Politeness(rules);
  }

  // ---- phase ------------------------------------------------------------------------------

  get phase(): HostPhase {
    return this.#phase;
  }

  /** Moves to `next` unless the host is being let go; returns false then (nothing changes). */
  moveTo(next: Exclude<HostPhase, 'releasing'>): boolean {
    if (this.#phase === 'releasing') return false;
    this.#phase = next;
    return true;
  }

  /** Starts letting the host go; returns false when it was let go already. */
  letGo(): boolean {
    if (this.#phase === 'releasing') return false;
    this.#phase = 'releasing';
    return true;
  }

  /** True once another node took the host's lease: nothing more may be written for it. */
  get leaseLost(): boolean {
    return this.#leaseLost;
  }

  loseLease(): void {
    this.#leaseLost = true;
  }

  // ---- keys: done, claimed ----------------------------------------------------------------

  /** True when the key is done or claimed: offering it again would do nothing. */
  isKnown(key: string): boolean {
    return this.#done.has(key) || this.#claimed.has(key);
  }

  /** Keys done (links record or final errs record) as far as this node knows. */
  get doneCount(): number {
    return this.#done.size;
  }

  isDone(key: string): boolean {
    return this.#done.has(key);
  }

  isClaimed(key: string): boolean {
    return this.#claimed.has(key);
  }

  /** Claims a key (queued, retrying or in flight here). */
  claim(key: string): void {
    this.#claimed.add(key);
  }

  /** Gives a claim back (the URL was not done: stopped, moved, or the commit failed). */
  release(key: string): void {
    this.#claimed.delete(key);
  }

  /** The key has a links record or a final errs record: done, no longer claimed or retried. */
  markDone(key: string): void {
    this.#done.add(key);
    this.#claimed.delete(key);
    this.#errs.delete(key);
  }

  /** The done set as read from the host's listing (no claims involved). */
  addDone(key: string): void {
    this.#done.add(key);
  }

  /** The errs record of a key that failed and is not final, if any. */
  errsOf(key: string): ErrsRecord | undefined {
    return this.#errs.get(key);
  }

  /** A key failed transiently: its errs record (it waits for a retry, see addRetry). */
  failed(key: string, record: ErrsRecord): void {
    this.#errs.set(key, record);
  }

  /** An errs record of `key` is on disk: written by this node, or read from the listing. */
  errsRecorded(key: string, record: ErrsRecord): void {
    this.#errsOnDisk.errs(key, record);
  }

  /** A links record of `key` is on disk (its errs record, if any, no longer counts). */
  pageRecorded(key: string): void {
    this.#errsOnDisk.page(key);
  }

  /**
   * The host's errs records as this node knows them: exact while it has held the lease since
   * the host's listing was read (the only writer meanwhile), so only for a host `ready` and
   * not lost.
   */
  errsOnDisk(): HostErrs {
    return this.#errsOnDisk.count();
  }

  // ---- the queue and the retries ----------------------------------------------------------

  get queued(): number {
    return this.#queue.length;
  }

  /** Queues an item and claims its key; `first`: ahead of the others (HostQueue.push). */
  push(item: QueueItem, first = false): void {
    this.#claimed.add(item.key);
    this.#queue.push(item, first);
  }

  shift(): QueueItem | undefined {
    return this.#queue.shift();
  }

  /** Removes every queued item and retry, gives their claims back, and returns them. */
  drain(): QueueItem[] {
    const items = [...this.#queue.drain(), ...this.#retries.splice(0).map(({ dueAt: _, ...item }) => item)];
    for (const item of items) this.#claimed.delete(item.key);
    return items;
  }

  /**
   * Keeps only the queued items for which `keep` is true; returns the others, whose claims
   * are given back unless they wait as retries.
   */
  filter(keep: (item: QueueItem) => boolean): QueueItem[] {
    const dropped: QueueItem[] = [];
    for (const item of this.#queue.drain()) {
      if (keep(item)) this.#queue.push(item);
      else dropped.push(item);
    }
    for (const item of dropped) if (!this.#retries.some((r) => r.key === item.key)) this.#claimed.delete(item.key);
    return dropped;
  }

  get retries(): readonly RetryItem[] {
    return this.#retries;
  }

  /** Claims a key that waits until `dueAt` (monotonic) for its next attempt. */
  addRetry(item: QueueItem, dueAt: number): void {
    this.#claimed.add(item.key);
    this.#retries.push({ ...item, dueAt });
  }

  /** Removes the waiting retry of `key` (its claim stays); true when there was one. */
  takeRetry(key: string): boolean {
    const i = this.#retries.findIndex((r) => r.key === key);
    if (i < 0) return false;
    this.#retries.splice(i, 1);
    return true;
  }

  /** Moves retries whose time has come into the queue; returns how many. */
  promoteDueRetries(now: number): number {
    let moved = 0;
    for (let i = this.#retries.length - 1; i >= 0; i--) {
      const r = this.#retries[i]!;
      if (r.dueAt <= now) {
        this.#retries.splice(i, 1);
        const { dueAt: _, ...item } = r;
        this.#queue.push(item);
        moved++;
      }
    }
    return moved;
  }

  /** Monotonic time of the earliest retry, or Infinity. */
  nextRetryAt(): number {
    let t = Infinity;
    for (const r of this.#retries) t = Math.min(t, r.dueAt);
    return t;
  }

  // ---- budgets ----------------------------------------------------------------------------

  /** Pages fetched from this host in this run (--max-pages-per-host). */
  get fetched(): number {
    return this.#fetched;
  }

  /** A request for a page of this host starts (`+1`) or turns out not to be needed (`-1`). */
  countFetch(n: 1 | -1): void {
    this.#fetched += n;
  }

  /** URLs of this shape admitted in this run (--max-pages-per-pattern). */
  shapeCount(shape: string): number {
    return this.#shapes.get(shape) ?? 0;
  }

  countShape(shape: string): void {
    this.#shapes.set(shape, this.shapeCount(shape) + 1);
  }

  // ---- origin and robots.txt --------------------------------------------------------------

  /** `scheme://host[:port]` of the host's pages (robots.txt is fetched there). */
  get origin(): string | undefined {
    return this.#origin;
  }

  /** Learns the origin from the first URL seen (later ones do not change it). */
  knowOrigin(url: string): void {
    this.#origin ??= originOf(url);
  }

  /** Robots rules once known; undefined while not fetched yet. */
  get robots(): RobotsRules | undefined {
    return this.#robots;
  }

  get robotsLoading(): boolean {
    return this.#robotsLoading;
  }

  /** Consecutive times robots.txt was unavailable. */
  get robotsFailures(): number {
    return this.#robotsFailures;
  }

  /** Monotonic time before which robots.txt is not asked for again. */
  get robotsRetryAt(): number {
    return this.#robotsRetryAt;
  }

  /** True when robots.txt stayed unavailable: the host is left alone for this run. */
  get gaveUp(): boolean {
    return this.#gaveUp;
  }

  robotsStarted(): void {
    this.#robotsLoading = true;
  }

  robotsKnown(rules: RobotsRules): void {
    this.#robots = rules;
    this.#robotsLoading = false;
    this.#robotsFailures = 0;
    this.politeness.setCrawlDelay(rules.crawlDelaySeconds);
  }

  /** robots.txt was unavailable (or the fetch stopped); returns the failures in a row. */
  robotsFailed(counts: boolean): number {
    this.#robotsLoading = false;
    if (counts) this.#robotsFailures++;
    return this.#robotsFailures;
  }

  /** robots.txt may be asked for again at `at` (monotonic). */
  robotsRetryLater(at: number): void {
    this.#robotsRetryAt = at;
  }

  /** Leaves the host alone for this run (robots.txt stayed unavailable). */
  giveUp(): void {
    this.#gaveUp = true;
  }
}

/** `scheme://authority` of a normalized URL. */
export function originOf(url: string): string {
  const slash = url.indexOf('/', url.indexOf('://') + 3);
  return slash < 0 ? url : url.slice(0, slash);
}
