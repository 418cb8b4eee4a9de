import { backoffMs } from '../frontier/retry-policy.js';

/** Failed revisits in a row after which a page is retired (docs/recrawl.md). */
export const REVISIT_TRIES = 4;
/** A page answering 404 or 410 this many revisits in a row is retired. */
export const GONE_TRIES = 2;

/**
 * The wait before the next revisit of a page whose revisit failed `attempts` times in a
 * row: 2, 4, 8 times its interval (backoffMs, the back-off of page retries, on the interval; at least a second), or
 * undefined when the page is retired: after REVISIT_TRIES failures, or GONE_TRIES for a
 * 404 or 410.
 */
export function revisitBackoff(intervalMs: number, attempts: number, status: number | undefined): number | undefined {
  const limit = status === 404 || status === 410 ? GONE_TRIES : REVISIT_TRIES;
  if (attempts >= limit) return undefined;
  return backoffMs(attempts + 1, Math.max(1_000, intervalMs), Number.POSITIVE_INFINITY);
}
