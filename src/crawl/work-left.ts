/**
 * "Nothing left", said once. A node asks it at two depths: whether it has anything in hand
 * (the request loop has nothing to start or wait for), and, after a reseed, whether anything
 * is left at all (only then does the end rule of termination.ts apply, docs/protocol.md,
 * "Rounds, reseeds and the end of the crawl").
 */

/** What a node holds in memory: URLs queued (hosts waiting for a lease, a listing or robots.txt included) and requests in flight. */
export interface WorkInHand {
  readonly queued: number;
  readonly inFlight: number;
}

/** Everything a node knows of after a reseed. */
export interface WorkLeft extends WorkInHand {
  /** URLs the reseed and the hand-offs received just now queued, or forwarded to their owners. */
  readonly found: number;
  /** Hand-off batches still waiting to be written: work for their owners (docs/protocol.md, "Hand-offs"). */
  readonly unsent: boolean;
  /** Monotonic time of the earliest retry due later; Infinity when none. */
  readonly nextRetryAt: number;
}

/** Nothing queued and nothing in flight (retries due later, unsent batches and the mount may still hold work). */
export function nothingInHand(w: WorkInHand): boolean {
  return w.queued === 0 && w.inFlight === 0;
}

/** Nothing in hand, nothing found by the reseed, nothing unsent and no retry due later: the node is idle. */
export function nothingLeft(w: WorkLeft): boolean {
  return nothingInHand(w) && w.found === 0 && !w.unsent && w.nextRetryAt === Infinity;
}
