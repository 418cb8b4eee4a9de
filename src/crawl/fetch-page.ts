import type { Clock } from '../config/clock.js';
import { FetchFailure } from '../errors.js';
import { extractLinks } from '../extract/link-extractor.js';
import { looksBinary } from '../extract/sniff-binary.js';
import type { FetchedResponse, Fetcher, Validators } from '../fetch/fetcher.js';
import { parseRetryAfter } from '../fetch/retry-after.js';
import type { RedirectHop } from '../store/records.js';
import { urlKey } from '../url/key.js';
import { normalizeUrl, type NormalizeOptions } from '../url/normalize.js';
import { headerValue } from '../fetch/header-value.js';
import { isTransientStatus } from '../fetch/classify-error.js';

/** A URL to fetch. */
export interface Target {
  readonly url: string;
  readonly key: string;
  readonly hostDir: string;
  readonly depth: number;
}

/** What one URL of a fetch chain came to: a page (or redirect) to commit, or a failure. */
export type Commit =
  | {
      readonly type: 'page';
      readonly target: Target;
      readonly response: FetchedResponse;
      readonly finalUrl: string;
      readonly redirects: readonly RedirectHop[];
      readonly body: Buffer | null;
      readonly charset?: string;
      readonly links: readonly string[];
      /** What a --hook onPage returned as data. */
      readonly data?: unknown;
      /** A revisit answered 304 Not Modified (docs/recrawl.md): the stored body stands. */
      readonly notModified?: boolean;
    }
  | { readonly type: 'error'; readonly target: Target; readonly failure: FetchFailure };

/** The result of crawling one URL: commits in the order they must be written. */
export interface PageOutcome {
  /** The fetched page (or failure) first, then the URLs that redirected to it. */
  readonly commits: Commit[];
  /** Links dropped because they were too long. */
  readonly tooLong: number;
  /** Requests made (one per hop). */
  readonly requests: number;
  /** Redirect targets this chain claimed (committed or not): the caller releases them. */
  readonly claimed: readonly Target[];
}

export interface FetchPageContext {
  readonly fetcher: Fetcher;
  readonly clock: Clock;
  readonly normalize: NormalizeOptions;
  readonly maxRedirects: number;
  /**
   * Asked before a same-host redirect is followed: true claims the target for this chain
   * (it is not done, not queued or in flight, in scope, allowed by robots.txt). False stops
   * the chain there and the target is only recorded as a link.
   */
  claimRedirect(target: Target): boolean;
  /** Waits until the host's politeness allows the next hop of a redirect chain. */
  pace(): Promise<void>;
  readonly signal?: AbortSignal;
  /** A revisit's stored validators, sent with the first request (conditional GET). */
  readonly validators?: Validators | undefined;
}

function httpFailure(res: FetchedResponse, now: number): FetchFailure {
  const status = res.status;
  const transient = isTransientStatus(status);
  const retryAfterMs = parseRetryAfter(headerValue(res.headers, 'retry-after'), now);
  return new FetchFailure(`HTTP_${status}`, transient ? 'transient' : 'final', `HTTP ${status}`, {
    status,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/**
 * Crawls one URL: fetches it, follows redirects within its host (manually, each hop checked
 * with `claimRedirect`, loops and long chains stopped), and reads the links of an HTML page.
 * Writes nothing: the caller commits the outcome. Network failures become error commits.
 */
export async function fetchPage(start: Target, ctx: FetchPageContext): Promise<PageOutcome> {
  const chain: { target: Target; response: FetchedResponse; location: string }[] = [];
  const seen = new Set<string>([start.url]);
  let target = start;
  let requests = 0;
  // Every target after the first was claimed with claimRedirect before it was fetched.
  const claimed = (): Target[] => (chain.length === 0 ? [] : [...chain.slice(1).map((h) => h.target), target]);
  /** A failure of the whole chain: one errs record, for the URL that was asked for. */
  const chainFailure = (failure: FetchFailure): PageOutcome => ({
    commits: [{ type: 'error', target: start, failure }],
    tooLong: 0,
    requests,
    claimed: claimed(),
  });
  const finish = (last: Commit, tooLong = 0): PageOutcome => {
    const commits: Commit[] = [last];
    const finalUrl = last.type === 'page' ? last.finalUrl : last.target.url;
    // The URLs that redirected, last hop first: each is committed after what it points to.
    for (let i = chain.length - 1; i >= 0; i--) {
      const hop = chain[i]!;
      commits.push({
        type: 'page',
        target: hop.target,
        response: hop.response,
        finalUrl,
        redirects: chain.slice(i).map((h) => ({ url: h.target.url, status: h.response.status, location: h.location })),
        body: null,
        links: [chain[i + 1]?.target.url ?? last.target.url],
      });
    }
    return { commits, tooLong, requests, claimed: claimed() };
  };

  for (;;) {
    let res: FetchedResponse;
    if (requests > 0) await ctx.pace();
    try {
      requests++;
      res = await ctx.fetcher.fetch(target.url, { signal: ctx.signal, ...(requests === 1 ? { validators: ctx.validators } : {}) });
    } catch (err) {
      const failure = err instanceof FetchFailure ? err : new FetchFailure('FETCH_FAILED', 'transient', String(err));
      return finish({ type: 'error', target, failure });
    }
    const status = res.status;
    if (status >= 300 && status < 400 && status !== 304) {
      const loc = headerValue(res.headers, 'location');
      const next = loc === undefined ? undefined : normalizeUrl(loc, target.url, ctx.normalize);
      if (next === undefined || !next.ok) {
        const why = loc === undefined ? 'no Location header' : `unusable Location ${JSON.stringify(loc.slice(0, 200))}`;
        return finish({ type: 'error', target, failure: new FetchFailure('BAD_REDIRECT', 'final', why, { status }) });
      }
      if (seen.has(next.url)) {
        return chainFailure(new FetchFailure('REDIRECT_LOOP', 'final', `redirect loop back to ${next.url}`, { status }));
      }
      if (chain.length + 1 > ctx.maxRedirects) {
        return chainFailure(new FetchFailure('TOO_MANY_REDIRECTS', 'final', `more than ${ctx.maxRedirects} redirects`, { status }));
      }
      const nextTarget: Target = { url: next.url, key: urlKey(next.url), hostDir: next.hostDir, depth: start.depth };
      if (next.hostDir !== start.hostDir || !ctx.claimRedirect(nextTarget)) {
        // Another host's (its owner will find the link), or already known: record and stop.
        return finish({
          type: 'page',
          target,
          response: res,
          finalUrl: next.url,
          redirects: [{ url: target.url, status, location: next.url }],
          body: null,
          links: [next.url],
        });
      }
      chain.push({ target, response: res, location: next.url });
      seen.add(next.url);
      target = nextTarget;
      continue;
    }
    if (status === 304 && requests === 1 && ctx.validators !== undefined) {
      return finish({ type: 'page', target, response: res, finalUrl: target.url, redirects: [], body: null, links: [], notModified: true });
    }
    if (status < 200 || status >= 300) {
      return finish({ type: 'error', target, failure: httpFailure(res, ctx.clock.now()) });
    }
    if (res.body === null) {
      return finish({ type: 'page', target, response: res, finalUrl: target.url, redirects: [], body: null, links: [] });
    }
    if (looksBinary(res.body)) {
      const failure = new FetchFailure('BINARY_BODY', 'final', `binary content served as ${res.mediaType ?? 'no type'}`, {
        status,
      });
      return finish({ type: 'error', target, failure });
    }
    const extracted = extractLinks(res.body, target.url, res.contentType, res.truncated, ctx.normalize);
    return finish(
      {
        type: 'page',
        target,
        response: res,
        finalUrl: target.url,
        redirects: [],
        body: res.body,
        charset: extracted.charset,
        links: extracted.links,
      },
      extracted.tooLong,
    );
  }
}
