/**
 * Failures that say nothing is there to answer at all: nothing listens on the port. Trying
 * the host again seconds later within the same run rarely helps, and under the default
 * retry policy (--retry-delay 30 s, doubling, --max-attempts 3) it would keep a crawl of an
 * unreachable seed waiting for 90 s before it could say so.
 */
const NOTHING_LISTENS = new Set(['CONNECTION_REFUSED']);

/**
 * Whether a host is left alone for this run after its first contact failed (docs/errors.md):
 * true when the very first request of the run to the host (its robots.txt) failed with
 * CONNECTION_REFUSED and the data directory holds no page of the host yet, so no earlier run
 * ever reached it either. Its URLs are then recorded as due again (not final): a later run
 * tries the host once more. A host that answered before gets the usual retries.
 */
export function leaveAloneAtFirstContact(code: string, failuresSoFar: number, pagesStored: number): boolean {
  return NOTHING_LISTENS.has(code) && failuresSoFar === 1 && pagesStored === 0;
}
