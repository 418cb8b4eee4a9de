import type { Clock } from '../config/clock.js';
import { FetchFailure } from '../errors.js';
import type { ExtractThread } from '../extract/extract-thread.js';
import { extractLinks } from '../extract/link-extractor.js';
import { mergeDirectives, parseXRobotsTag } from '../extract/meta-robots.js';
import { looksBinary } from '../extract/sniff-binary.js';
import { isHtmlType, type Validators } from '../fetch/fetcher.js';
import { extensionOf } from '../fetch/keep-types.js';
import type { Commit, PageOutcome, Target } from '../fetch/page-outcome.js';
import { statusStep } from '../hooks/builtin-steps.js';
import { MiddlewareChain } from '../hooks/middleware-chain.js';
import { redirectPolicy, sendRequest, type PipelineContext } from '../request/pipeline.js';
import { urlKey } from '../url/key.js';
import type { NormalizeOptions } from '../url/normalize.js';

export interface FetchPageContext extends PipelineContext {
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
  /** Waits until the host's politeness allows the next hop of a redirect chain; false: the hop is not sent. */
  pace(): Promise<boolean>;
  /** A revisit's stored validators, sent with the first request (conditional GET). */
  readonly validators?: Validators | undefined;
}

/**
 * Crawls one URL: sends it through the request pipeline (src/request/pipeline.ts: the
 * middleware, redirects within its host, each hop claimed with `claimRedirect`, loops and
 * long chains stopped), and reads the links of an HTML page. Writes nothing: the caller
 * commits the outcome. Network failures become error commits.
 */
export async function fetchPage(start: Target, ctx: FetchPageContext): Promise<PageOutcome> {
  // A redirect target was found through the chain's start: the page that linked to the start is its referrer too.
  const asTarget = (url: string): Target =>
    url === start.url
      ? start
      : {
          url,
          key: urlKey(url),
          hostDir: start.hostDir,
          depth: start.depth,
          ...(start.referrer === undefined ? {} : { referrer: start.referrer }),
        };
  const middleware = ctx.middleware ?? new MiddlewareChain([], [statusStep(() => ctx.clock.now())]);
  const { end, hops, requests } = await sendRequest(
    {
      kind: 'page',
      url: start.url,
      host: start.hostDir,
      depth: start.depth,
      redirects: redirectPolicy('page', {
        hostDir: start.hostDir,
        maxRedirects: ctx.maxRedirects,
        normalize: ctx.normalize,
        claim: (next) => ctx.claimRedirect(asTarget(next.url)),
      }),
      validators: ctx.validators,
    },
    { ...ctx, middleware },
  );
  const target = asTarget(end.url);
  // Every target after the first was claimed with claimRedirect before it was fetched.
  const claimed = hops.length === 0 ? [] : [...hops.slice(1).map((h) => asTarget(h.url)), target];
  /** A failure of the whole chain: one errs record, for the URL that was asked for. */
  const chainFailure = (failure: FetchFailure): PageOutcome => ({
    commits: [{ type: 'error', target: start, failure }],
    tooLong: 0,
    requests,
    claimed,
  });
  const finish = (last: Commit, tooLong = 0): PageOutcome => {
    const commits: Commit[] = [last];
    const finalUrl = last.type === 'page' ? last.finalUrl : last.target.url;
    // The URLs that redirected, last hop first: each is committed after what it points to.
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      commits.push({
        type: 'page',
        target: asTarget(hop.url),
        response: hop.response,
        finalUrl,
        redirects: hops.slice(i).map((h) => ({ url: h.url, status: h.response.status, location: h.location })),
        body: null,
        links: [hops[i + 1]?.url ?? last.target.url],
      });
    }
    return { commits, tooLong, requests, claimed };
  };

  switch (end.type) {
    case 'failure':
      return finish({ type: 'error', target, failure: end.failure });
    case 'bad-redirect': {
      const why = end.location === undefined ? 'no Location header' : `unusable Location ${JSON.stringify(end.location.slice(0, 200))}`;
      return finish({ type: 'error', target, failure: new FetchFailure('BAD_REDIRECT', 'final', why, { status: end.response.status }) });
    }
    case 'redirect-loop':
      return chainFailure(new FetchFailure('REDIRECT_LOOP', 'final', `redirect loop back to ${end.next}`, { status: end.response.status }));
    case 'too-many-redirects':
      return chainFailure(
        new FetchFailure('TOO_MANY_REDIRECTS', 'final', `more than ${ctx.maxRedirects} redirects`, { status: end.response.status }),
      );
    case 'not-followed':
      // Another host's (its owner will find the link), or already known: record and stop.
      return finish({
        type: 'page',
        target,
        response: end.response,
        finalUrl: end.next.url,
        redirects: [{ url: target.url, status: end.response.status, location: end.next.url }],
        body: null,
        links: [end.next.url],
      });
    case 'not-modified':
      return finish({
        type: 'page',
        target,
        response: end.response,
        finalUrl: target.url,
        redirects: [],
        body: null,
        links: [],
        notModified: true,
      });
    case 'response':
      break;
  }
  const res = end.response;
  const status = res.status;
  const verdict = end.verdict;
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
