import { callHook, type HookCallEnv } from './hook-call.js';
import type { HookModule } from './hooks.js';

/** Where a URL stands in its host's queue: higher first; equal ones first come, first served. */
export type UrlPriority = (url: string, context: { readonly depth: number; readonly host: string }) => Promise<number>;

/** The default priority: breadth first (a shallower URL first). */
export function defaultPriority(depth: number): number {
  return -depth;
}

/**
 * The URL prioritizer of the --hook modules (docs/hooks.md), or undefined when none exports
 * `priority`. Each module in turn gets the priority so far (the default first) and may return
 * another number. A call that throws, times out or returns no finite number keeps the
 * priority so far. The priority is not stored: it is computed again whenever a URL is offered
 * (a link of a page, a seed, a link found on disk at a reseed), so its context holds only what
 * is known each time.
 */
export function urlPriority(hooks: readonly HookModule[], env: HookCallEnv): UrlPriority | undefined {
  const ranked = hooks.filter((m) => m.priority !== undefined);
  if (ranked.length === 0) return undefined;
  return async (url, { depth, host }) => {
    let priority = defaultPriority(depth);
    for (const m of ranked) {
      const context = { depth, host, priority };
      const r = await callHook(env, `priority (${m.file})`, () => m.priority!(url, context));
      if (r.ok && typeof r.value === 'number' && Number.isFinite(r.value)) priority = r.value;
    }
    return priority;
  };
}
