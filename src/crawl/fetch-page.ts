import type { Clock } from '../config/clock.js';
import { FetchFailure } from '../errors.js';
import type { ExtractThread } from '../extract/extract-thread.js';
import { extractLinks } from '../extract/link-extractor.js';
import { mergeDirectives, parseXRobotsTag } from '../extract/meta-robots.js';
import { looksBinary } from '../extract/sniff-binary.js';
import { isHtmlType, type FetchedResponse, type Fetcher, type Validators } from '../fetch/fetcher.js';
import { extensionOf } from '../fetch/keep-types.js';
import type { Commit, PageOutcome, Target } from '../fetch/page-outcome.js';
import { urlKey } from '../url/key.js';
import { normalizeUrl, type NormalizeOptions } from '../url/normalize.js';
import { headerValue } from '../fetch/header-value.js';
import { statusStep } from '../hooks/builtin-steps.js';
import { MiddlewareChain } from '../hooks/middleware-chain.js';

export interface FetchPageContext {
  readonly fetcher: Fetcher;
  readonly clock: Clock;
  readonly normalize: NormalizeOptions;
  readonly maxRedirects: number;
  /** Leave out rel="nofollow" links (--obey-rel-nofollow). */
  readonly obeyRelNofollow?: boolean;
  /** Finds the links of HTML pages in a thread of their own (ExtractThread); without it, here. */
  readonly extractor?: ExtractThread | undefined;
  /**
   * Asked before a same-host redirect is followed: true claims the target for this chain
   * (it is not done, not queued or in flight, in scope, allowed by robots.txt). False stops
   * the chain there and the target is only recorded as a link.
   */
  claimRedirect(target: Target): boolean;
  /** Waits until the host's politeness allows the next hop of a redirect chain. */
  pace(): Promise<void>;
  readonly signal?: AbortSignal;
  /**
   * The fetch middleware (src/hooks/middleware-chain.ts): before each request of the chain
   * and after each response that is not a redirect. Without it: the status decision only.
   */
  readonly middleware?: MiddlewareChain;
  /** A revisit's stored validators, sent with the first request (conditional GET). */
  readonly validators?: Validators | undefined;
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

  const middleware = ctx.middleware ?? new MiddlewareChain([], [statusStep(() => ctx.clock.now())]);
  for (;;) {
    let res: FetchedResponse;
    const request = { url: target.url, depth: target.depth, host: target.hostDir, headers: {} };
    const before = await middleware.before(request);
    if (before.kind === 'skip') return finish({ type: 'error', target, failure: before.failure });
    if (before.kind === 'respond') {
      res = before.response;
    } else {
      if (requests > 0) await ctx.pace();
      try {
        requests++;
        res = await ctx.fetcher.fetch(target.url, { signal: ctx.signal, headers: before.headers, ...(chain.length === 0 ? { validators: ctx.validators } : {}) });
      } catch (err) {
        const failure = err instanceof FetchFailure ? err : new FetchFailure('FETCH_FAILED', 'transient', String(err));
        return finish({ type: 'error', target, failure });
      }
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
    // A revisit's conditional GET answered 304 (docs/recrawl.md): unchanged, before the status
    // verdict of the middleware would make it an error. A --hook's answer stands for the
    // server's (docs/hooks.md), so its 304 to a revisit means the same.
    if (status === 304 && chain.length === 0 && ctx.validators !== undefined) {
      return finish({ type: 'page', target, response: res, finalUrl: target.url, redirects: [], body: null, links: [], notModified: true });
    }
    const verdict = await middleware.after(request, res, before.kind === 'respond');
    if (verdict.failure !== undefined) return finish({ type: 'error', target, failure: verdict.failure });
    if (res.body === null || status < 200 || status >= 300) {
      return finish({ type: 'page', target, response: res, finalUrl: target.url, redirects: [], body: null, links: [] });
    }
    if (!isHtmlType(res.mediaType)) {
      // Read only because --keep asked for its type (the fetcher reads no other non-HTML body).
      const file = { body: res.body, ext: extensionOf(res.mediaType) };
      return finish({ type: 'page', target, response: res, finalUrl: target.url, redirects: [], body: null, links: [], file });
    }
    if (looksBinary(res.body)) {
      const failure = new FetchFailure('BINARY_BODY', 'final', `binary content served as ${res.mediaType ?? 'no type'}`, {
        status,
      });
      return finish({ type: 'error', target, failure });
    }
    const extractOptions = { obeyRelNofollow: ctx.obeyRelNofollow === true };
    const extracted =
      ctx.extractor === undefined
        ? extractLinks(res.body, target.url, res.contentType, res.truncated, ctx.normalize, extractOptions)
        : await ctx.extractor.extract(res.body, target.url, res.contentType, res.truncated, extractOptions);
    // <meta name="robots"> and X-Robots-Tag (src/extract/meta-robots.ts): noindex pages are
    // fetched for their links but not kept; nofollow pages' links are not followed.
    const directives = mergeDirectives(extracted.robots, parseXRobotsTag(res.headers['x-robots-tag']));
    const robots = [...(directives.noindex ? ['noindex'] : []), ...(directives.nofollow ? ['nofollow'] : [])];
    return finish(
      {
        type: 'page',
        target,
        response: res,
        finalUrl: target.url,
        redirects: [],
        body: directives.noindex ? null : res.body,
        charset: extracted.charset,
        links: directives.nofollow ? [] : extracted.links,
        ...(robots.length > 0 ? { robots } : {}),
      },
      extracted.tooLong,
    );
  }
}
