/** When to try a transiently failed URL again. */
export interface RetryRules {
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
}

/**
 * Exponential backoff: after the n-th failed attempt, wait base * 2^(n-1), capped, or what
 * the server asked for in Retry-After when that is longer. Returns undefined when
 * `attempts` has reached the limit and the failure is final.
 */
export function nextRetryDelay(attempts: number, rules: RetryRules, retryAfterMs?: number): number | undefined {
  if (attempts >= rules.maxAttempts) return undefined;
  const backoff = backoffMs(attempts, rules.retryBaseMs, rules.retryMaxMs);
  return Math.max(backoff, Math.min(retryAfterMs ?? 0, rules.retryMaxMs));
}

/**
 * The one exponential back-off: after the n-th failure in a row (n >= 1), wait
 * base * 2^(n-1), at most `maxMs`. Page retries and robots.txt (through nextRetryDelay) and
 * supervisor restarts use it.
 */
export function backoffMs(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
}
