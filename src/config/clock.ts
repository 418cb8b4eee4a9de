/**
 * Time as an input (STYLE §6): wall time for what is written to disk, monotonic time for
 * every duration and every liveness decision (machines' clocks are never compared).
 */
export interface Clock {
  /** Wall-clock milliseconds since the epoch: only for timestamps written into records. */
  now(): number;
  /** Monotonic milliseconds from an arbitrary origin: for durations, deadlines, liveness. */
  monotonic(): number;
}

/** The real clock. */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => performance.now(),
});
