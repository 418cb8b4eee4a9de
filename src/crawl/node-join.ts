import type { Ownership } from '../cluster/ownership.js';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import { noSeedsError } from '../errors.js';
import type { Logger } from '../progress/logger.js';
import { hasSeeds, writeSeeds } from '../reseed/seeds.js';
import { writeSitemapSeeds } from '../sitemap/sitemaps.js';
import { normalizeUrl, type NormalizeOptions } from '../url/normalize.js';
import type { Heartbeat } from './heartbeat.js';
import type { Parts } from './node-parts.js';

/** How often a starting node with siblings looks for them in nodes/. */
const STARTUP_POLL_MS = 50;

export interface JoinOptions {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly ownership: Ownership;
  readonly heartbeat: Heartbeat;
}

/**
 * Joins the crawl: seeds, the first records, the wait for siblings, everything before the
 * first reseed. Every step may be repeated (a failure of the mount on the way starts it again).
 */
export async function joinCrawl(p: Parts, o: JoinOptions): Promise<void> {
  // On the node's clock (docs/architecture.md, "Time"): a test's fake clock moves these waits too.
  const delay = (ms: number): Promise<void> => new Promise((resolve) => o.clock.setTimeout(resolve, ms));
  await writeSeeds(p.layout, renormalize(o.config.seedUrls, p.normalize), o.config.nodeId);
  await writeSitemapSeeds(p.layout, o.config.sitemapUrls ?? [], p.normalize, { nodeId: o.config.nodeId });
  if (!o.config.watch && !(await hasSeeds(p.layout))) throw noSeedsError(o.config.dataDir);
  // Through the fence, as the heartbeat's records: a start slower than --dead-after / 2 (a
  // stalled mount) may have let peers that saw its first files count this node dead.
  const beat = async (): Promise<void> => {
    o.heartbeat.fence.beforeRecord();
    await p.membership.beat(o.heartbeat.status('starting'));
    o.heartbeat.fence.recordOut();
  };
  await beat();
  await p.membership.observe();
  // Siblings under one supervisor know they are N: each waits (a heartbeat at most) until
  // it sees the others, so that the first one up does not take every host only to hand most
  // of them over a moment later. A node started on its own does not wait with host leases
  // (docs/protocol.md, "Nodes and liveness"): nodes that start later join as any node joins.
  // With --partition url a join repeats what is in flight: it waits a heartbeat, as before.
  const expected = o.config.startPeers ?? 0;
  if (expected === 0 && o.ownership.partition === 'url') await delay(o.config.heartbeatMs);
  for (let waited = 0; expected > 0 && waited < o.config.heartbeatMs; waited += STARTUP_POLL_MS) {
    await delay(STARTUP_POLL_MS);
    await p.membership.observe();
    if (p.membership.livePeers().length >= expected) break;
  }
  await beat();
  await p.membership.observe();
  o.ownership.setLive(p.membership.liveIds());
  p.membership.takeDepartures(); // the first reseed is full: it covers them
  // With hand-offs later reseeds skip other hosts' records: the first one reads them all.
  if (p.handoffs !== undefined) p.reseeder.wantFull();
  o.heartbeat.start();
  o.log.debug('node started', { node: o.config.nodeId, data: o.config.dataDir });
}

/** Seeds given on the command line, normalized again with the data directory's rules. */
function renormalize(seedUrls: readonly string[], normalize: NormalizeOptions): string[] {
  return seedUrls.flatMap((u) => {
    const r = normalizeUrl(u, undefined, normalize);
    return r.ok ? [r.url] : [];
  });
}
