import type { FetchFailure } from '../errors.js';
import { RECORD_VERSION, type ErrsRecord, type LinksRecord } from '../store/records.js';
import type { Commit, Target } from '../fetch/page-outcome.js';
import { headerValue } from '../fetch/header-value.js';
import { attemptsAfterFailure } from '../frontier/retry-policy.js';

/** The links record of a page (or redirect) commit. */
export function buildLinksRecord(
  commit: Extract<Commit, { type: 'page' }>,
  options: { nodeId: string; nowMs: number; htmlPath: string | null; filePath?: string },
): LinksRecord {
  const res = commit.response;
  const etag = headerValue(res.headers, 'etag');
  const lastModified = headerValue(res.headers, 'last-modified');
  return {
    v: RECORD_VERSION,
    url: commit.target.url,
    finalUrl: commit.finalUrl,
    status: res.status,
    contentType: res.contentType,
    bytes: commit.body?.length ?? 0,
    ...(res.truncated && commit.body !== null ? { truncated: true } : {}),
    fetchedAt: new Date(options.nowMs).toISOString(),
    ...(res.capturedMs !== undefined ? { capturedAt: new Date(res.capturedMs).toISOString() } : {}),
    depth: commit.target.depth,
    node: options.nodeId,
    durationMs: res.durationMs,
    html: options.htmlPath,
    ...(commit.charset !== undefined ? { charset: commit.charset } : {}),
    ...(etag !== undefined ? { etag } : {}),
    ...(lastModified !== undefined ? { lastModified } : {}),
    ...(commit.redirects.length > 0 ? { redirects: commit.redirects } : {}),
    ...(commit.data !== undefined ? { data: commit.data } : {}),
    ...(options.filePath !== undefined ? { file: options.filePath } : {}),
    ...(commit.robots !== undefined ? { robots: commit.robots } : {}),
    ...(commit.sitemap !== undefined ? { sitemap: commit.sitemap } : {}),
    links: commit.links,
  };
}

/**
 * The errs record after one more failed attempt. `previous` is the URL's earlier errs
 * record, if any; `retryInMs` is the wait before the next attempt, undefined when final.
 * `referrer`: the first page found linking to the URL (docs/protocol.md): the earlier
 * record's, else the target's; none for a seed.
 */
export function buildErrsRecord(
  target: Target,
  failure: FetchFailure,
  previous: ErrsRecord | undefined,
  options: { nodeId: string; nowMs: number; retryInMs: number | undefined },
): ErrsRecord {
  const now = new Date(options.nowMs).toISOString();
  const final = options.retryInMs === undefined;
  const referrer = previous?.referrer ?? target.referrer;
  return {
    v: RECORD_VERSION,
    url: target.url,
    code: failure.code,
    message: failure.message.slice(0, 500),
    ...(failure.status !== undefined ? { status: failure.status } : {}),
    final,
    attempts: attemptsAfterFailure(previous),
    firstAt: previous?.firstAt ?? now,
    lastAt: now,
    nextAttemptAt: final ? null : new Date(options.nowMs + options.retryInMs!).toISOString(),
    depth: target.depth,
    node: options.nodeId,
    ...(referrer === undefined ? {} : { referrer: { url: referrer.url, depth: referrer.depth } }),
  };
}
