import { FetchFailure } from '../errors.js';
import { MAX_ROBOTS_BYTES, RobotsUnavailable, type RobotsCache, type RobotsRules } from '../fetch/robots.js';
import { redirectPolicy, sendRequest, type PipelineContext } from './pipeline.js';

/**
 * The rules of `hostDir`, whose pages are served at `origin` (scheme://host[:port]): as stored
 * on the mount while they are young enough, or fetched through the request pipeline like any
 * request (kind `robots`: the headers, --header, --cookie-file and the --hook steps, the
 * status verdict; redirects on any host, up to five) and stored. What the answer means
 * (RFC 9309): 2xx, its rules; a 4xx or any other final verdict, a redirect that leads nowhere
 * or too far, everything allowed; a transient one (5xx, 429, no answer: the status verdict
 * of docs/errors.md) throws RobotsUnavailable, and the host waits (src/crawl/host-robots.ts).
 * A beforeFetch cannot skip robots.txt (src/hooks/middleware-chain.ts): it is fetched anyway.
 * A stop (ABORTED) is thrown as it is. The pipeline's `sent` is told of each request that went
 * out (none when the rules were read from the mount or a --hook answered; one per redirect hop):
 * the end summary counts only requests a site saw. `mayFetch` is asked after the
 * mount was read, which may have taken long: when it says no (the node was fenced, the lease
 * lost meanwhile) nothing is sent and ABORTED is thrown.
 */
export async function robotsRules(
  cache: RobotsCache,
  hostDir: string,
  origin: string,
  ctx: PipelineContext,
  mayFetch?: () => boolean,
): Promise<RobotsRules> {
  const cached = await cache.cached(hostDir);
  if (cached !== undefined) return cached;
  if (mayFetch?.() === false) throw new FetchFailure('ABORTED', 'transient', 'not sent: this node may no longer crawl the host');
  const robotsUrl = `${origin}/robots.txt`;
  const { end } = await sendRequest(
    {
      kind: 'robots',
      url: robotsUrl,
      host: hostDir,
      depth: 0,
      // Five redirects (RFC 9309), whatever --max-redirects says.
      redirects: redirectPolicy('robots', { hostDir, maxRedirects: 0 }),
      options: { anyType: true, maxBytes: MAX_ROBOTS_BYTES },
    },
    ctx,
  );
  switch (end.type) {
    case 'failure': {
      const f = end.failure;
      if (f.code === 'ABORTED') throw f;
      throw new RobotsUnavailable(f.message, f.code, f.kind);
    }
    case 'redirect-loop':
    case 'too-many-redirects':
      // RFC 9309 treats robots.txt as unavailable (4xx-like): everything allowed.
      return cache.store(hostDir, robotsUrl, 310, '');
    case 'bad-redirect':
    case 'not-followed':
    case 'not-modified':
      // A redirect that leads nowhere ends the chain like any other 3xx.
      return cache.store(hostDir, robotsUrl, end.response.status, '');
    case 'response': {
      const res = end.response;
      const failure = end.verdict.failure;
      if (failure !== undefined && failure.kind === 'transient') {
        throw new RobotsUnavailable(failure.message, failure.code, 'transient', failure.retryAfterMs);
      }
      const ok = failure === undefined && res.status >= 200 && res.status < 300;
      return cache.store(hostDir, robotsUrl, res.status, ok && res.body !== null ? res.body.toString('utf8') : '');
    }
  }
}
