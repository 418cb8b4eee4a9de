import { FetchFailure } from '../errors.js';
import type { FetchedResponse, Fetcher, FetchOptions, Validators } from '../fetch/fetcher.js';
import { headerValue } from '../fetch/header-value.js';
import type { HookRequest, RequestKind } from '../hooks/hooks.js';
import { MiddlewareChain, type Verdict } from '../hooks/middleware-chain.js';
import { normalizeUrl, type NormalizeOptions } from '../url/normalize.js';

/**
 * The one path of every request a node sends (a page, a sitemap, a host's robots.txt):
 * the fetch middleware before each hop (headers, --header, --cookie-file, the robots.txt
 * gate, the --hook beforeFetch steps: docs/hooks.md), the request, the one redirect policy
 * (per kind: how many redirects, and where to), and the status verdict with the --hook
 * afterFetch steps on the response that ends the chain. What the end means is the kind's
 * business (src/crawl/fetch-page.ts, src/sitemap/fetch-sitemap.ts, src/request/robots-request.ts).
 */

/** What every request of a node is sent with. */
export interface PipelineContext {
  readonly fetcher: Fetcher;
  /** The fetch middleware (src/hooks/middleware-chain.ts); without it: no step, every response accepted. */
  readonly middleware?: MiddlewareChain | undefined;
  readonly signal?: AbortSignal | undefined;
  /**
   * Waits until the host's politeness allows the next hop of a redirect chain; without it, hops
   * are not paced. False: the hop is not sent, this node may no longer crawl the host (the wait
   * may have been a pause past --dead-after).
   */
  pace?(): Promise<boolean>;
  /** Told as each request goes out, before the fetcher starts it: the host's politeness counts its gap from then. */
  sending?(): void;
  /** Told of each request sent, with the HTTP status of its answer (undefined: none came). */
  sent?(status: number | undefined): void;
}

/** Where a redirect may lead. */
export interface RedirectTarget {
  readonly url: string;
  readonly hostDir: string;
}

/** How far a kind of request follows redirects, and where to. */
export interface RedirectPolicy {
  /** Redirects followed at most: one more is TOO_MANY_REDIRECTS. */
  readonly max: number;
  /** The URL a Location names, or undefined when it is unusable. */
  resolve(location: string, base: string): RedirectTarget | undefined;
  /** Asked before a redirect is followed: false ends the chain there ('not-followed'). */
  mayFollow(next: RedirectTarget): boolean;
}

/** RFC 9309 §2.3.1.2: a crawler follows at least five redirects for robots.txt. */
export const MAX_ROBOTS_REDIRECTS = 5;

/**
 * The redirect policy of each kind (one place for all three):
 * - page: --max-redirects; the Location is read as a link (normalized); only within the
 *   start's host, and only when `claim` takes the target for this chain (not done, queued or
 *   in flight, in scope, allowed by robots.txt);
 * - sitemap: --max-redirects; normalized; only within the start's host;
 * - robots: five (RFC 9309), any http(s) URL as it is, on any host.
 */
export function redirectPolicy(
  kind: RequestKind,
  o: {
    readonly hostDir: string;
    readonly maxRedirects: number;
    readonly normalize?: NormalizeOptions;
    readonly claim?: (next: RedirectTarget) => boolean;
  },
): RedirectPolicy {
  if (kind === 'robots') return { max: MAX_ROBOTS_REDIRECTS, resolve: httpUrl, mayFollow: () => true };
  const resolve = (location: string, base: string): RedirectTarget | undefined => {
    const n = normalizeUrl(location, base, o.normalize);
    return n.ok ? { url: n.url, hostDir: n.hostDir } : undefined;
  };
  const claim = o.claim;
  return {
    max: o.maxRedirects,
    resolve,
    mayFollow: (next) => next.hostDir === o.hostDir && (kind !== 'page' || claim === undefined || claim(next)),
  };
}

/** An http(s) URL as the Location gives it (robots.txt), or undefined (missing, not a URL, another scheme). */
function httpUrl(location: string, base: string): RedirectTarget | undefined {
  try {
    const u = new URL(location, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? { url: u.href, hostDir: u.host } : undefined;
  } catch {
    return undefined;
  }
}

/** One request to send, and how. */
export interface RequestSpec {
  readonly kind: RequestKind;
  readonly url: string;
  /** The host's directory name (docs/url-keys.md): what hooks see as `request.host`. */
  readonly host: string;
  readonly depth: number;
  readonly redirects: RedirectPolicy;
  /** Options of each hop's request (read any type, a size cap, a streamed body). */
  readonly options?: Pick<FetchOptions, 'anyType' | 'maxBytes' | 'consumeBody'>;
  /** A revisit's stored validators, sent with the first request only (conditional GET). */
  readonly validators?: Validators | undefined;
}

/** A redirect that was followed. */
export interface Hop {
  readonly url: string;
  readonly response: FetchedResponse;
  /** The URL it led to. */
  readonly location: string;
}

/** How a chain ended, at `url` (the last URL requested, or skipped). */
export type RequestEnd =
  /** A response that is not a redirect, with the verdict of the after-steps (status, afterFetch). */
  | {
      readonly type: 'response';
      readonly url: string;
      readonly response: FetchedResponse;
      readonly verdict: Verdict;
      readonly synthetic: boolean;
    }
  /** The first request's validators were answered 304 Not Modified: no verdict (docs/recrawl.md). */
  | { readonly type: 'not-modified'; readonly url: string; readonly response: FetchedResponse }
  /** Skipped by a before-step, or no answer (network failure). */
  | { readonly type: 'failure'; readonly url: string; readonly failure: FetchFailure }
  /** A redirect without a usable Location. */
  | { readonly type: 'bad-redirect'; readonly url: string; readonly response: FetchedResponse; readonly location: string | undefined }
  /** A redirect back to a URL of the chain. */
  | { readonly type: 'redirect-loop'; readonly url: string; readonly response: FetchedResponse; readonly next: string }
  /** One redirect more than the kind's policy follows. */
  | { readonly type: 'too-many-redirects'; readonly url: string; readonly response: FetchedResponse }
  /** A redirect the policy does not follow (another host, a URL already known). */
  | { readonly type: 'not-followed'; readonly url: string; readonly response: FetchedResponse; readonly next: RedirectTarget };

export interface RequestResult {
  readonly end: RequestEnd;
  /** The redirects followed, in order. */
  readonly hops: readonly Hop[];
  /** Requests sent (a skipped or answered hop sends none). */
  readonly requests: number;
}

const NO_STEPS = new MiddlewareChain([], []);

/** Sends one request of any kind through the middleware, following redirects by its kind's policy. */
export async function sendRequest(spec: RequestSpec, ctx: PipelineContext): Promise<RequestResult> {
  const middleware = ctx.middleware ?? NO_STEPS;
  const hops: Hop[] = [];
  const seen = new Set<string>([spec.url]);
  let url = spec.url;
  let requests = 0;
  const done = (end: RequestEnd): RequestResult => ({ end, hops, requests });
  for (;;) {
    const request: HookRequest = { url, depth: spec.depth, host: spec.host, kind: spec.kind, headers: {} };
    const before = await middleware.before(request);
    if (before.kind === 'skip') return done({ type: 'failure', url, failure: before.failure });
    let res: FetchedResponse;
    if (before.kind === 'respond') {
      res = before.response;
    } else {
      if (requests > 0 && (await ctx.pace?.()) === false) {
        return done({ type: 'failure', url, failure: new FetchFailure('ABORTED', 'transient', 'not sent: fenced or lease lost') });
      }
      try {
        requests++;
        ctx.sending?.();
        res = await ctx.fetcher.fetch(url, {
          ...spec.options,
          signal: ctx.signal,
          headers: before.headers,
          ...(hops.length === 0 && spec.validators !== undefined ? { validators: spec.validators } : {}),
        });
      } catch (err) {
        ctx.sent?.(undefined);
        const failure = err instanceof FetchFailure ? err : new FetchFailure('FETCH_FAILED', 'transient', String(err));
        return done({ type: 'failure', url, failure });
      }
      ctx.sent?.(res.status);
    }
    const status = res.status;
    if (status >= 300 && status < 400 && status !== 304) {
      const location = headerValue(res.headers, 'location');
      const next = location === undefined ? undefined : spec.redirects.resolve(location, url);
      if (next === undefined) return done({ type: 'bad-redirect', url, response: res, location });
      if (seen.has(next.url)) return done({ type: 'redirect-loop', url, response: res, next: next.url });
      if (hops.length + 1 > spec.redirects.max) return done({ type: 'too-many-redirects', url, response: res });
      if (!spec.redirects.mayFollow(next)) return done({ type: 'not-followed', url, response: res, next });
      hops.push({ url, response: res, location: next.url });
      seen.add(next.url);
      url = next.url;
      continue;
    }
    // A revisit's conditional GET answered 304 (docs/recrawl.md): unchanged, before the status
    // verdict would make it an error. A --hook's answer stands for the server's (docs/hooks.md).
    if (status === 304 && hops.length === 0 && spec.validators !== undefined) return done({ type: 'not-modified', url, response: res });
    const verdict = await middleware.after(request, res, before.kind === 'respond');
    return done({ type: 'response', url, response: res, verdict, synthetic: before.kind === 'respond' });
  }
}
