import type { Clock } from '../config/clock.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import { hookFailed } from './hooks.js';

/** What a hook call needs: the clock for its deadline, where failures are counted. */
export interface HookCallEnv {
  readonly clock: Clock;
  readonly stats: CrawlStats;
  readonly log: Logger;
  /** --hook-timeout: how long one call may take, milliseconds. */
  readonly timeoutMs: number;
}

/** The result of one hook call: its value, or that it failed (threw or timed out). */
export type HookCallResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false };

/**
 * Calls one entry point of a --hook module with a deadline (docs/hooks.md): a call that throws
 * or does not settle within --hook-timeout is counted (stats.hookErrors, stats.hookTimeouts,
 * the end summary) and reported for the first few; the caller then takes its documented
 * fallback. A call that hangs is abandoned, never waited for.
 */
export async function callHook<T>(env: HookCallEnv, what: string, call: () => T | Promise<T>): Promise<HookCallResult<T>> {
  let timer: ReturnType<Clock['setTimeout']> | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = env.clock.setTimeout(() => resolve('timeout'), env.timeoutMs);
  });
  try {
    const value = await Promise.race([Promise.resolve().then(call), deadline]);
    if (value === 'timeout') {
      env.stats.hookTimeouts++;
      if (env.stats.hookTimeouts <= 5) env.log.warn(`--hook ${what} did not answer within ${env.timeoutMs} ms`);
      return { ok: false };
    }
    return { ok: true, value: value as T };
  } catch (err) {
    hookFailed(env, what, err);
    return { ok: false };
  } finally {
    env.clock.clearTimeout(timer);
  }
}
