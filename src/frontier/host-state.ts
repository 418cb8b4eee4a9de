import type { RobotsRules } from '../fetch/robots.js';
import type { ErrsRecord } from '../store/records.js';
import { KeySet } from '../url/key-set.js';
import { ErrsTally, type HostErrs } from '../store/errs-tally.js';
import { HostWork } from './host-work.js';
import { Politeness, type PolitenessRules, type PolitenessView } from './politeness.js';

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
 * only writer), the claims, the queue and the retries (HostWork), the politeness slot and
 * robots rules. The frontier makes it (Frontier.hostFor); others change it only through
 * these methods.
 *
 * Its invariants are kept here, through methods: a key is claimed while it is queued,
 * retrying or in flight, and a claimed key is neither done nor offered again; a done key is
 * never claimed; `releasing` is the last phase.
 */
export class HostState extends HostWork {
  readonly dir: string;
  readonly #politeness: Politeness;
  /** Keys with a links record or a final errs record (64-bit fingerprints: see KeySet). */
  readonly #done = new KeySet();
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
  /** Called once when the last request in flight ends (to release a host that moved). */
  #onIdle: (() => void) | undefined;

  constructor(dir: string, rules: PolitenessRules) {
    super();
    this.dir = dir;
    this.#politeness = new Politeness(rules);
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
    return this.#done.has(key) || this.isClaimed(key);
  }

  /** Keys done (links record or final errs record) as far as this node knows. */
  get doneCount(): number {
    return this.#done.size;
  }

  isDone(key: string): boolean {
    return this.#done.has(key);
  }

  /** The key has a links record or a final errs record: done, no longer claimed or retried. */
  markDone(key: string): void {
    this.#done.add(key);
    this.release(key);
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
   * not lost. Final or not under `maxAttempts` (src/frontier/retry-policy.ts isFinal).
   */
  errsOnDisk(maxAttempts: number): HostErrs {
    return this.#errsOnDisk.count(maxAttempts);
  }

  // ---- requests: the politeness slot, opened and closed here -------------------------------

  /** How politeness stands for the host; it changes only through the methods below. */
  get politeness(): PolitenessView {
    return this.#politeness;
  }

  /** Requests to the host in flight (pages and robots.txt). */
  get inFlight(): number {
    return this.#politeness.inFlight;
  }

  /**
   * A request (a page or robots.txt) takes the host's politeness slot at `now`; returns the
   * previous start (for `sentNothing`). Each `beginRequest` has one `endRequest`.
   */
  beginRequest(now: number): number {
    return this.#politeness.started(now);
  }

  /** The request sent nothing (a --hook or robots.txt skipped it): the gap counts from `previousStart` again. */
  sentNothing(previousStart: number): void {
    this.#politeness.sentNothing(previousStart);
  }

  /** Milliseconds before the next hop of a redirect chain may go within the slot held (0: now). */
  hopWaitMs(now: number): number {
    return this.#politeness.hopWaitMs(now);
  }

  /** A request of a slot held goes out at `now`: the gap to the next start counts from then (Politeness.sending). */
  sending(now: number): void {
    this.#politeness.sending(now);
  }

  /** No request before `until` (monotonic ms): a Retry-After. */
  pauseUntil(until: number): void {
    this.#politeness.pauseUntil(until);
  }

  /** A request ends: its slot is freed; when it was the last in flight, the idle handler runs (`whenIdle`). */
  endRequest(outcome: 'ok' | 'transient' | 'final'): void {
    this.#politeness.finished(outcome);
    if (this.#politeness.inFlight === 0 && this.#onIdle) {
      const f = this.#onIdle;
      this.#onIdle = undefined;
      f();
    }
  }

  /** Runs `fn` once, when the last request in flight ends (a host let go waits for its requests). */
  whenIdle(fn: () => void): void {
    this.#onIdle = fn;
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
    this.#politeness.setCrawlDelay(rules.crawlDelaySeconds);
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

  /** The host is not left alone after all (its URLs could not be recorded): robots.txt is asked for again. */
  keepAfterAll(): void {
    this.#gaveUp = false;
  }
}

/** `scheme://authority` of a normalized URL. */
export function originOf(url: string): string {
  const slash = url.indexOf('/', url.indexOf('://') + 3);
  return slash < 0 ? url : url.slice(0, slash);
}
