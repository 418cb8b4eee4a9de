/** A timer made by a Clock; only that clock's clearTimeout knows what it is. */
export type Timer = { readonly __timer: true } | NodeJS.Timeout;

/**
 * Time as an input (docs/architecture.md, "Time"): wall time for what is written to disk,
 * monotonic time for every duration and every liveness decision (machines' clocks are never
 * compared), and timers, so that tests run the frontier, politeness and retries on a fake
 * clock (test/support/fake-clock.ts) without sleeping.
 */
export interface Clock {
  /** Wall-clock milliseconds since the epoch: only for timestamps written into records. */
  now(): number;
  /** Monotonic milliseconds from an arbitrary origin: for durations, deadlines, liveness. */
  monotonic(): number;
  /** Calls `fn` once, `ms` monotonic milliseconds from now. */
  setTimeout(fn: () => void, ms: number): Timer;
  clearTimeout(timer: Timer | undefined): void;
}

/** The real clock. */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (fn: () => void, ms: number): Timer => setTimeout(fn, ms),
  clearTimeout: (timer: Timer | undefined): void => clearTimeout(timer as NodeJS.Timeout | undefined),
});
