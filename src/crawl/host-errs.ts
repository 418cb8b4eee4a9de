import type { Clock } from '../config/clock.js';
import type { Frontier } from '../frontier/frontier.js';
import type { HostState } from '../frontier/host-state.js';
import { isFinal } from '../frontier/retry-policy.js';
import type { ErrsRecord } from '../store/records.js';

/**
 * What a taken host's errs records mean (docs/errors.md): a final one makes its URL done; any
 * other is a failure so far, whose retry is queued when its `nextAttemptAt` comes (now, when
 * it has none). URLs done already (a links record) are passed over.
 */
export function applyErrs(
  host: HostState,
  errs: ReadonlyMap<string, ErrsRecord>,
  d: { readonly frontier: Frontier; readonly clock: Clock; readonly maxAttempts: number },
): void {
  const now = d.clock.monotonic();
  const wallNow = d.clock.now();
  for (const [key, rec] of errs) {
    if (host.isDone(key)) continue;
    if (isFinal(rec, d.maxAttempts)) {
      host.addDone(key);
      continue;
    }
    host.failed(key, rec);
    if (host.retries.some((r) => r.key === key)) continue;
    // nextAttemptAt was written by some node's wall clock: a small skew only moves a retry.
    const dueWall = rec.nextAttemptAt === null ? wallNow : Date.parse(rec.nextAttemptAt);
    d.frontier.addRetry(host, { url: rec.url, key, depth: rec.depth }, now + Math.max(0, dueWall - wallNow));
  }
}
