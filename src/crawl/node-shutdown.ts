import type { Ownership } from '../cluster/ownership.js';
import { describeError } from '../errors.js';
import type { Fetcher } from '../fetch/fetcher.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import type { HostErrs } from '../store/errs-tally.js';
import type { WarcCapture } from '../warc/warc-capture.js';
import type { Heartbeat } from './heartbeat.js';
import { leaveDone } from './leave-done.js';
import type { Parts } from './node-parts.js';

/** How long requests in flight may finish after a stop before they are abandoned. */
export const STOP_GRACE_MS = 5_000;

export interface ShutdownOptions {
  readonly log: Logger;
  readonly stats: CrawlStats;
  readonly ownership: Ownership;
  readonly heartbeat: Heartbeat;
  readonly fetcher: Fetcher;
  readonly warc: WarcCapture | undefined;
  /** --max-attempts: which errs records are final (src/frontier/retry-policy.ts). */
  readonly maxAttempts: number;
  /** True when this node has not reached the mount for long enough that others may count it dead. */
  fenced(): boolean;
}

/**
 * Stops a node: requests in flight finish (or are abandoned after a grace period), then
 * timers, captures, hand-offs, hosts and leases go, and the node leaves. `complete`: the crawl
 * ended by the rule (docs/protocol.md, "Rounds, reseeds and the end of the crawl"): the node may leave done. Returns the errs
 * records of the hosts it held to the end (errsOfHostsHeld).
 */
export async function shutDownNode(p: Parts, complete: boolean, o: ShutdownOptions): Promise<ReadonlyMap<string, HostErrs> | undefined> {
  o.stats.state = 'stopping';
  o.stats.queued = p.frontier.queued; // what is left, for the run state `status` reads
  o.stats.queuedByHost = queuedByHost(p);
  await p.requests.drain(STOP_GRACE_MS);
  p.requests.abort();
  await p.requests.drain(2_000);
  await p.recrawler?.flushAll().catch(() => undefined);
  await p.summaries?.flushAll();
  // Links to a host left alone for this run (robots.txt unavailable) found since are only in this
  // node's memory: recorded now, while its leases are held, as the give-up recorded the others.
  const recorded = await p.hostRobots.recordSetAside();
  const heldErrs = errsOfHostsHeld(p, o);
  await o.heartbeat.close();
  p.frontier.close();
  await o.warc?.close().catch((err) => o.log.warn(`warc: the last file was not closed (the next run closes it): ${describeError(err)}`));
  // Best effort: links found but not sent yet. A node that had any cannot leave done (its
  // files may land after its peers' last reading): it leaves lost, and the others reseed fully.
  const unsent = p.handoffs?.outbox.waiting === true;
  await p.handoffs?.outbox.flush().catch(() => undefined);
  // Best effort: on a failed mount these fail too, and others take over after dead-after.
  // No host is taken after this (a take waiting for its turn would take a lease after the release).
  await p.keeper.close(STOP_GRACE_MS);
  await p.leases.releaseAll();
  // Those that could not be recorded are in no record of their host: a peer that takes the host
  // would not read the records naming them, so this node leaves lost (peers reseed fully).
  if (complete) await leaveDone(p, o.heartbeat.status('done'), unsent || !recorded);
  else await p.membership.leave().catch(() => undefined);
  // However it left, its inbox goes if it is empty (docs/protocol.md, "Leaving done").
  await p.handoffs?.inbox.removeOwn();
  // Temporary files a fault left that the mount lets go of now (best effort, never throws).
  await p.layout.mount.temps.removeLeft();
  p.store.close();
  p.extractor?.close();
  await o.fetcher.close().catch(() => undefined);
  return heldErrs;
}

/**
 * The errs records of the hosts this node held to the end, by host, as it knows them
 * (HostState.errsOnDisk); undefined when it knows none for sure (URL partitioning: other
 * nodes write into the same hosts; or it was fenced).
 */
function errsOfHostsHeld(p: Parts, o: ShutdownOptions): ReadonlyMap<string, HostErrs> | undefined {
  if (o.ownership.partition !== 'host' || o.fenced()) return undefined;
  const held = new Map<string, HostErrs>();
  for (const host of p.frontier.hosts.values()) {
    if (host.phase === 'ready' && !host.leaseLost) held.set(host.dir, host.errsOnDisk(o.maxAttempts));
  }
  return held;
}

/** The URLs queued of each host this node crawls (ready, its queue loaded), by host directory. */
function queuedByHost(p: Parts): Record<string, number> {
  const out: Record<string, number> = {};
  for (const host of p.frontier.hosts.values()) if (host.phase === 'ready') out[host.dir] = host.queued;
  return out;
}
