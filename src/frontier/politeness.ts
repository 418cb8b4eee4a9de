/** Per-host politeness rules, as data (in the manner of colly's LimitRule). */
export interface PolitenessRules {
  /** Requests in flight to the host at once. */
  readonly perHost: number;
  /** Least gap between request starts, milliseconds. */
  readonly delayMs: number;
  /** Longest Crawl-delay from robots.txt that is honoured, milliseconds. */
  readonly crawlDelayCapMs: number;
}

/** What makes a host wait before its next request. */
export type PolitenessLimit = 'delay' | 'crawl-delay' | 'retry-after' | 'slowdown';

/** What may be read of a host's politeness by those who do not change it (HostState changes it). */
export type PolitenessView = Pick<Politeness, 'inFlight' | 'gapMs' | 'nextStartAt' | 'limit' | 'pausedUntil'>;

/** Longest slow-down factor applied to a struggling host. */
const MAX_SLOWDOWN = 64;

/**
 * The politeness state of one host: how many requests are in flight, when the next may
 * start, and how much the host is slowed down. Times are monotonic milliseconds.
 *
 * - at most `perHost` in flight;
 * - starts at least `max(delay, Crawl-delay)` apart, times the slow-down factor;
 * - a 429 or 503 with Retry-After pauses the host until then;
 * - every transient failure (5xx, timeout, reset) doubles the slow-down factor, up to 64;
 *   every success halves it again.
 */
export class Politeness {
  #inFlight = 0;
  #lastStart = -Infinity;
  #pausedUntil = 0;
  #slowdown = 1;
  #crawlDelayMs = 0;

  constructor(private readonly rules: PolitenessRules) {}

  get inFlight(): number {
    return this.#inFlight;
  }

  /** The gap now enforced between starts, milliseconds. */
  get gapMs(): number {
    const base = Math.max(this.rules.delayMs, this.#crawlDelayMs);
    return this.#slowdown === 1 ? base : Math.max(base, 250) * this.#slowdown;
  }

  /** Sets the robots.txt Crawl-delay (seconds in the file), capped. */
  setCrawlDelay(seconds: number | undefined): void {
    const ms = seconds === undefined || !Number.isFinite(seconds) || seconds < 0 ? 0 : seconds * 1000;
    this.#crawlDelayMs = Math.min(ms, this.rules.crawlDelayCapMs);
  }

  /**
   * When the next request may start: `now` or later, or Infinity while the host already has
   * `perHost` requests in flight.
   */
  nextStartAt(now: number): number {
    if (this.#inFlight >= this.rules.perHost) return Infinity;
    return Math.max(now, this.#lastStart + this.gapMs, this.#pausedUntil);
  }

  /** A request takes its slot at `now`; returns the previous start (for `sentNothing`). */
  started(now: number): number {
    const previous = this.#lastStart;
    this.#inFlight++;
    this.#lastStart = now;
    return previous;
  }

  /**
   * A request that took its slot sent nothing (robots.txt or a --hook skipped it, or a hook
   * answered it): the gap counts from the start before it again. Its slot ends with `finished`.
   */
  sentNothing(previousStart: number): void {
    this.#lastStart = previousStart;
  }

  /**
   * Milliseconds to wait before a further request within a slot already held (the next hop
   * of a redirect chain), 0 when it may go now.
   */
  hopWaitMs(now: number): number {
    return Math.max(0, this.#lastStart + this.gapMs - now, this.#pausedUntil - now);
  }

  /**
   * A request of a slot held goes out at `now` (its first or a redirect hop): the gap counts
   * from then. A slot is taken when the request may start, and on a busy node its send can
   * come later (the mount's copy of robots.txt read, the --hook steps): counted from the slot,
   * the next request could follow it by less than the gap.
   */
  sending(now: number): void {
    if (now > this.#lastStart) this.#lastStart = now;
  }

  finished(outcome: 'ok' | 'transient' | 'final'): void {
    this.#inFlight--;
    if (outcome === 'transient') this.#slowdown = Math.min(MAX_SLOWDOWN, this.#slowdown * 2);
    else if (outcome === 'ok' && this.#slowdown > 1) this.#slowdown /= 2;
  }

  /** No request before `until` (monotonic ms): a Retry-After, or robots.txt unavailable. */
  pauseUntil(until: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, until);
  }

  /**
   * Which rule holds the next start back at `now` (docs/options.md, politeness): a pause
   * (Retry-After, robots.txt unavailable), the slow-down after failures, the robots.txt
   * Crawl-delay, or --delay. Undefined when a request may start now or the host is full.
   */
  limit(now: number): PolitenessLimit | undefined {
    const at = this.nextStartAt(now);
    if (at === Infinity || at <= now) return undefined;
    if (this.#pausedUntil >= at) return 'retry-after';
    if (this.#slowdown > 1) return 'slowdown';
    return this.#crawlDelayMs > this.rules.delayMs ? 'crawl-delay' : 'delay';
  }

  get pausedUntil(): number {
    return this.#pausedUntil;
  }
}
