import { Readable } from 'node:stream';
import { FetchFailure } from '../errors.js';
import type { PipelineContext } from '../request/pipeline.js';
import { redirectPolicy, sendRequest } from '../request/pipeline.js';
import type { PageOutcome, Target } from '../fetch/page-outcome.js';
import { urlKey } from '../url/key.js';
import { normalizeUrl, type NormalizeOptions } from '../url/normalize.js';
import { SITEMAP_MAX_BYTES, parseSitemap, type SitemapResult } from './sitemap-parser.js';

/** A page of the sitemap's host with a `<lastmod>`: it may be due again (docs/sitemaps.md). */
export interface LastmodHint {
  readonly key: string;
  readonly lastmodMs: number;
}

/** A fetched sitemap: the outcome to commit, and what it says beyond its links. */
export interface SitemapFetch {
  readonly outcome: PageOutcome;
  /** Child sitemaps of an index, on the sitemap's host (they are its links too). */
  readonly children: readonly string[];
  readonly hints: readonly LastmodHint[];
}

/** What fetching a sitemap needs: the request pipeline, and how links are read. */
export interface SitemapContext extends PipelineContext {
  readonly normalize: NormalizeOptions;
  readonly maxRedirects: number;
}

/**
 * Fetches one sitemap (docs/sitemaps.md) through the request pipeline (src/request/pipeline.ts:
 * the page's middleware, headers, robots.txt, the --hook steps, the status verdict), following
 * redirects within its host, and reads it with the capped parser. The outcome is one commit:
 * a links record whose links are the sitemap's pages (or, for an index, its child sitemaps on
 * the same host), or one errs record when it could not be had or read at all. Writes nothing.
 */
export async function fetchSitemap(start: Target, ctx: SitemapContext): Promise<SitemapFetch> {
  /** The sitemap as the parser read it while it streamed in (undefined: the body was held). */
  let parsed: SitemapResult | undefined;
  const { end, requests } = await sendRequest(
    {
      kind: 'sitemap',
      url: start.url,
      host: start.hostDir,
      depth: start.depth,
      redirects: redirectPolicy('sitemap', { hostDir: start.hostDir, maxRedirects: ctx.maxRedirects, normalize: ctx.normalize }),
      // The body goes to the parser as it arrives, never held whole (a sitemap may be 50 MB).
      options: {
        anyType: true,
        maxBytes: SITEMAP_MAX_BYTES,
        consumeBody: async (body) => {
          parsed = await parseSitemap(body);
        },
      },
    },
    ctx,
  );
  const fail = (failure: FetchFailure): SitemapFetch => ({
    outcome: { commits: [{ type: 'error', target: start, failure }], tooLong: 0, requests, claimed: [] },
    children: [],
    hints: [],
  });
  if (end.type === 'failure') return fail(end.failure);
  if (end.type !== 'response') {
    const why = end.type === 'not-followed' ? `redirects to another host (${end.next.url})` : 'unusable redirect';
    return fail(new FetchFailure('SITEMAP_REDIRECT', 'final', `sitemap ${why}`, { status: end.response.status }));
  }
  const res = end.response;
  const target = { url: end.url };
  if (end.verdict.failure !== undefined) return fail(end.verdict.failure);
  if (res.status < 200 || res.status >= 300 || (res.body === null && parsed === undefined)) {
    return fail(
      new FetchFailure(`HTTP_${res.status}`, 'final', `sitemap answered HTTP ${res.status} without a body`, { status: res.status }),
    );
  }
  // A body held whole (an answer of a --hook, or a WARC capture, which needs it) is fed in
  // slices: the parser's text and buffers stay small beside the body itself.
  parsed ??= await parseSitemap(Readable.from(slices(res.body!, 64 * 1024)));
  if (parsed.entries.length === 0 && parsed.error !== undefined) {
    return fail(new FetchFailure('SITEMAP_MALFORMED', 'final', `not a readable sitemap: ${parsed.error}`, { status: res.status }));
  }
  const links: string[] = [];
  const children: string[] = [];
  const hints: LastmodHint[] = [];
  const taken = new Set<string>();
  let isIndex = false;
  for (const e of parsed.entries) {
    const n = normalizeUrl(e.loc, target.url, ctx.normalize);
    if (!n.ok || taken.has(n.url)) continue;
    if (e.kind === 'sitemap') {
      isIndex = true;
      // sitemaps.org: an index lists sitemaps of its own site; others are not followed.
      if (n.hostDir !== start.hostDir) continue;
      children.push(n.url);
    } else if (e.lastmodMs !== undefined && n.hostDir === start.hostDir) {
      hints.push({ key: urlKey(n.url), lastmodMs: e.lastmodMs });
    }
    taken.add(n.url);
    links.push(n.url);
  }
  const sitemap = {
    kind: isIndex
      ? ('index' as const)
      : parsed.format === 'rss' || parsed.format === 'rdf' || parsed.format === 'feed'
        ? ('feed' as const)
        : ('urlset' as const),
    entries: parsed.entries.length,
    ...(parsed.dropped > 0 ? { dropped: parsed.dropped } : {}),
    ...(parsed.error !== undefined ? { error: parsed.error } : {}),
  };
  return {
    outcome: {
      commits: [{ type: 'page', target: start, response: res, finalUrl: target.url, redirects: [], body: null, links, sitemap }],
      tooLong: 0,
      requests,
      claimed: [],
    },
    children,
    hints,
  };
}

function* slices(body: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < body.length; at += size) yield body.subarray(at, at + size);
}
