/** When to try a transiently failed URL again. */
export interface RetryRules {
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
}

/** What an errs record says of its URL's attempts (src/store/records.ts). */
export interface AttemptsSoFar {
  /** The failure was final when written: trying again cannot help, or the limit was reached. */
  readonly final: boolean;
  /** Failed attempts so far. */
  readonly attempts: number;
}

/**
 * The one rule of finality: how many more attempts a URL with errs record `record` gets under
 * `maxAttempts` (--max-attempts). 0 when the record says final, or when its attempts have
 * reached the limit: a record written by a run with a higher --max-attempts is final under a
 * lower one. A record written final stays final under a higher limit (it does not say whether
 * trying again could help). The crawler (which URLs it tries again), the committer (through
 * nextRetryDelay), a node's end summary and `status` all count with this.
 */
export function attemptsLeft(record: AttemptsSoFar, maxAttempts: number): number {
  return record.final ? 0 : Math.max(0, maxAttempts - record.attempts);
}

/** The attempts an errs record counts after one more failure of a URL whose earlier record is `previous` (if any). */
export function attemptsAfterFailure(previous: AttemptsSoFar | undefined): number {
  return (previous?.attempts ?? 0) + 1;
}

/** True when the URL of errs record `record` is not tried again under `maxAttempts` (attemptsLeft is 0). */
export function isFinal(record: AttemptsSoFar, maxAttempts: number): boolean {
  return attemptsLeft(record, maxAttempts) === 0;
}

/**
 * Exponential backoff: after the n-th failed attempt, wait base * 2^(n-1), capped, or what
 * the server asked for in Retry-After when that is longer. Returns undefined when
 * `attempts` has reached the limit and the failure is final (isFinal).
 */
export function nextRetryDelay(attempts: number, rules: RetryRules, retryAfterMs?: number): number | undefined {
  if (isFinal({ final: false, attempts }, rules.maxAttempts)) return undefined;
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
