/**
 * How a crawl revisits pages (docs/recrawl.md): `--recrawl-after`, and with
 * `--recrawl-adaptive` the bounds `--recrawl-min` and `--recrawl-max`.
 */
export interface RecrawlPolicy {
  /** A page fetched longer ago than this is due again (the first interval of every page). */
  readonly afterMs: number;
  /** Shorten the interval of pages that change, lengthen it for those that do not. */
  readonly adaptive: boolean;
  readonly minMs: number;
  readonly maxMs: number;
}

/** Increase of the interval after a visit that found the page unchanged (Nutch's INC_RATE). */
export const INC_RATE = 0.4;
/** Decrease of the interval after a visit that found the page changed (Nutch's DEC_RATE). */
export const DEC_RATE = 0.2;

/**
 * The interval after a visit, in the manner of Nutch's AdaptiveFetchSchedule
 * (docs/recrawl.md): unchanged, `interval * (1 + INC_RATE)`; changed,
 * `interval * (1 - DEC_RATE)`; bounded by [minMs, maxMs]. Without --recrawl-adaptive the
 * interval is always --recrawl-after.
 */
export function nextIntervalMs(previousMs: number | undefined, changed: boolean, policy: RecrawlPolicy): number {
  if (!policy.adaptive) return policy.afterMs;
  const base = previousMs ?? policy.afterMs;
  const next = changed ? base * (1 - DEC_RATE) : base * (1 + INC_RATE);
  return Math.round(Math.min(policy.maxMs, Math.max(policy.minMs, next)));
}
