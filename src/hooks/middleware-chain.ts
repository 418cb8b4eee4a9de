import { FetchFailure } from '../errors.js';
import type { FetchedResponse } from '../fetch/fetcher.js';
import { callHook, type HookCallEnv } from './hook-call.js';
import type { BeforeFetchResult, HookModule, HookRequest, HookResponse, HookVerdict } from './hooks.js';

type Awaitable<T> = T | Promise<T>;

/** The decision so far on a response: what a user sees as `response.verdict`, with the failure it means. */
export type Verdict = HookVerdict & { readonly failure?: FetchFailure };

/** What the before-steps came to: send the request (with these headers), record a failure, or use this answer. */
export type BeforeOutcome =
  | { readonly kind: 'fetch'; readonly headers: Readonly<Record<string, string>> }
  | { readonly kind: 'skip'; readonly failure: FetchFailure }
  | { readonly kind: 'respond'; readonly response: FetchedResponse };

/** A step before a request: may change its headers (in place), skip it or answer it. */
export interface BeforeStep {
  readonly name: string;
  run(request: HookRequest): Awaitable<Exclude<BeforeOutcome, { kind: 'fetch' }> | undefined>;
}

/** A step after a response (not a redirect): returns a new verdict, or undefined to keep it. */
export interface AfterStep {
  readonly name: string;
  run(request: HookRequest, response: HookResponse, raw: FetchedResponse): Awaitable<Verdict | undefined>;
}

/**
 * The fetch middleware of a node (docs/hooks.md), in the manner of Scrapy's downloader
 * middleware: one chain of before-steps and one of after-steps, the built-in ones
 * (src/hooks/builtin-steps.ts: headers, robots gate, status and Retry-After) first, then
 * each --hook module's beforeFetch / afterFetch in the order given, so a user's step sees
 * what the built-ins did. A step that skips or answers ends the before-chain. A user step
 * that throws or times out changes nothing (counted: callHook).
 */
export class MiddlewareChain {
  readonly #before: readonly BeforeStep[];
  readonly #after: readonly AfterStep[];

  constructor(
    builtinBefore: readonly BeforeStep[],
    builtinAfter: readonly AfterStep[],
    user?: { readonly hooks: readonly HookModule[]; readonly env: HookCallEnv },
  ) {
    const hooks = user?.hooks ?? [];
    this.#before = [...builtinBefore, ...hooks.filter((m) => m.beforeFetch !== undefined).map((m) => userBeforeStep(m, user!.env))];
    this.#after = [...builtinAfter, ...hooks.filter((m) => m.afterFetch !== undefined).map((m) => userAfterStep(m, user!.env))];
  }

  /** Runs the before-steps on a request about to be sent. */
  async before(request: HookRequest): Promise<BeforeOutcome> {
    for (const step of this.#before) {
      const r = await step.run(request);
      if (r !== undefined) return r;
    }
    return { kind: 'fetch', headers: request.headers };
  }

  /** Runs the after-steps on a response that is not a redirect; returns the last verdict. */
  async after(request: HookRequest, raw: FetchedResponse, synthetic: boolean): Promise<Verdict> {
    let verdict: Verdict = { action: 'accept' };
    let text: string | null | undefined;
    for (const step of this.#after) {
      const response: HookResponse = {
        url: raw.url,
        status: raw.status,
        headers: raw.headers,
        contentType: raw.contentType,
        get text(): string | null {
          text ??= raw.body === null ? null : raw.body.toString('utf8');
          return text;
        },
        verdict,
        synthetic,
      };
      verdict = (await step.run(request, response, raw)) ?? verdict;
    }
    return verdict;
  }
}

function userBeforeStep(m: HookModule, env: HookCallEnv): BeforeStep {
  const what = `beforeFetch (${m.file})`;
  let warnedRobotsSkip = false;
  return {
    name: what,
    async run(request) {
      // The hook works on a copy: if it fails, the headers are as the steps before it left them.
      const copy: HookRequest = { ...request, headers: { ...request.headers } };
      const r = await callHook<BeforeFetchResult>(env, what, () => m.beforeFetch!(copy));
      if (!r.ok) return undefined;
      const out = r.value;
      if (out === undefined || out === null) {
        request.headers = lowerCaseHeaders(copy.headers);
        return undefined;
      }
      if (typeof out !== 'object') {
        // not an answer: counted below
      } else if (!('action' in out) || out.action === undefined) {
        if ('url' in out || 'headers' in out) {
          // The request returned (as hooks of other frameworks do), or one like it: send it
          // with its headers (its URL stays the one asked for).
          const headers = (out as { headers?: unknown }).headers;
          request.headers = lowerCaseHeaders(
            typeof headers === 'object' && headers !== null ? (headers as Record<string, unknown>) : copy.headers,
          );
          return undefined;
        }
      } else if (out.action === 'skip') {
        if (request.kind === 'robots') {
          // A hook does not switch robots.txt off (--ignore-robots does): a broad skip written
          // for pages would otherwise make every host's rules "allow everything" unseen.
          if (!warnedRobotsSkip) env.log.warn(`--hook ${what} skipped robots.txt: it is read anyway (--ignore-robots crawls without it)`);
          warnedRobotsSkip = true;
          return undefined;
        }
        return { kind: 'skip', failure: new FetchFailure('HOOK_SKIPPED', 'final', out.reason ?? 'skipped by beforeFetch') };
      } else if (out.action === 'respond') {
        const body = Buffer.from(out.body ?? '');
        const headers = lowerCaseHeaders({ 'content-type': 'text/html; charset=utf-8', ...out.headers });
        const contentType = headers['content-type'] ?? null;
        const response: FetchedResponse = {
          url: request.url,
          status: out.status ?? 200,
          headers,
          contentType,
          mediaType: contentType === null ? null : contentType.split(';')[0]!.trim().toLowerCase(),
          body,
          truncated: false,
          durationMs: 0,
        };
        return { kind: 'respond', response };
      }
      env.stats.hookErrors++;
      env.log.warn(`--hook ${what} returned an unknown action; ignored`);
      return undefined;
    },
  };
}

function userAfterStep(m: HookModule, env: HookCallEnv): AfterStep {
  const what = `afterFetch (${m.file})`;
  return {
    name: what,
    async run(request, response) {
      const r = await callHook(env, what, () => m.afterFetch!({ ...request, headers: { ...request.headers } }, response));
      if (!r.ok || r.value === undefined || r.value === null) return undefined;
      const v = r.value;
      if (v === response.verdict) return undefined;
      const status = response.status;
      switch (v.action) {
        case 'accept':
          return { action: 'accept' };
        case 'retry': {
          const delayMs = typeof v.delayMs === 'number' && v.delayMs >= 0 ? v.delayMs : undefined;
          const failure = new FetchFailure('HOOK_RETRY', 'transient', v.reason ?? 'afterFetch asked for a retry', {
            status,
            ...(delayMs === undefined ? {} : { retryAfterMs: delayMs }),
          });
          return { ...v, failure };
        }
        case 'error':
          return {
            ...v,
            failure: new FetchFailure('HOOK_ERROR', v.transient ? 'transient' : 'final', v.reason ?? 'afterFetch made it an error', {
              status,
            }),
          };
        case 'drop':
          return { ...v, failure: new FetchFailure('HOOK_DROPPED', 'final', v.reason ?? 'dropped by afterFetch', { status }) };
        default:
          env.stats.hookErrors++;
          env.log.warn(`--hook ${what} returned an unknown action; ignored`);
          return undefined;
      }
    },
  };
}

function lowerCaseHeaders(headers: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && v !== null) out[k.toLowerCase()] = String(v);
  return out;
}
