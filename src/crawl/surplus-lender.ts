import type { Ownership } from '../cluster/ownership.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { Frontier } from '../frontier/frontier.js';
import type { HostState } from '../frontier/host-state.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import { chooseLends, demand, lendingShare, MAX_LENDS_PER_BEAT, MAX_LENT } from './host-lending.js';
import type { Parts } from './node-parts.js';

export interface LenderDeps {
  readonly config: CrawlConfig;
  readonly log: Logger;
  readonly stats: CrawlStats;
  readonly ownership: Ownership;
  readonly parts: Parts;
  /** True once the node is stopping. */
  stopping(): boolean;
  /** True when this node has not reached the mount for long enough that others may count it dead. */
  fenced(): boolean;
}

/** The hosts that take or will take request slots: all but those on their way out or blocked by another's lease. */
export function* hostLoads(frontier: Frontier): Iterable<{ dir: string; queued: number; inFlight: number }> {
  for (const h of frontier.hosts.values()) {
    if (h.phase === 'releasing' || h.phase === 'blocked') continue;
    yield { dir: h.dir, queued: h.queued, inFlight: h.politeness.inFlight };
  }
}

/** The act of lending hosts, at a heartbeat; the policy is host-lending.ts. */
export class SurplusLender {
  readonly #d: LenderDeps;
  /** Peer id -> its record counter when this node last lent it a host. */
  readonly #lentAt = new Map<string, number>();

  constructor(deps: LenderDeps) {
    this.#d = deps;
  }

  /**
   * Lending hosts (docs/protocol.md, "Lending hosts"): when this node's hosts want more
   * request slots than it has, and more than the cluster's even balance (lendingShare), it
   * lends hosts waiting for one (owned by rendezvous, lease held, nothing in flight, queue
   * long enough) to live peers whose records say they are below that balance, at most once
   * per two of a peer's heartbeats. Each lent host's queue goes into the outbox at once, in a
   * file to the borrower that names the lend as of the next record (so that a mount that fails
   * now loses nothing: the outbox keeps what it could not write), and the host is let go (its
   * lease released) before that record is written.
   * Returns how many hosts it lent (the heartbeat does not call it in its first beats).
   */
  async lend(): Promise<number> {
    const { config, ownership, stats } = this.#d;
    const p = this.#d.parts;
    const handoffs = p.handoffs;
    if (config.lend === false || ownership.partition !== 'host' || handoffs === undefined) return 0;
    if (this.#d.fenced() || this.#d.stopping() || p.guard.fault || p.requests.unwritten > 0) return 0;
    // A link that did not fit in memory is found again by this node's reseeds of its own records: it stays put.
    if (stats.cut.frontierFull > 0 || ownership.lentCount >= MAX_LENT) return 0;
    const balance = demand(hostLoads(p.frontier), config.perHost) - config.concurrency;
    if (balance <= 0) return 0;
    const peers = p.membership.livePeers().filter((r) => r.state === 'crawling' || r.state === 'idle' || r.state === 'waiting');
    const { surplus, peers: share } = lendingShare(config.nodeId, [
      { id: config.nodeId, balance, canBorrow: false },
      ...peers.map((r) => {
        const at = this.#lentAt.get(r.id);
        return { id: r.id, balance: (r.wanting ?? 0) - (r.spare ?? 0), canBorrow: at === undefined || r.counter >= at + 2 };
      }),
    ]);
    if (share.length === 0) return 0;
    const hosts: HostState[] = [];
    for (const h of p.frontier.hosts.values()) {
      if (h.phase !== 'ready' || h.politeness.inFlight > 0 || h.retries.length > 0 || h.robots === undefined || h.leaseLost) continue;
      if (ownership.rendezvousOwner(h.dir) === config.nodeId) hosts.push(h);
    }
    const chosen = chooseLends({
      surplus,
      perHost: config.perHost,
      hosts,
      peers: share,
      most: Math.min(MAX_LENDS_PER_BEAT, MAX_LENT - ownership.lentCount),
    });
    const released: Promise<void>[] = [];
    for (const { host: dir, borrower } of chosen) {
      const host = p.frontier.hosts.get(dir)!;
      const items = p.frontier.dropHost(host);
      ownership.lend(dir, borrower);
      handoffs.lent(borrower, dir, items, p.membership.counter + 1);
      released.push(p.keeper.letGo(host, 'moved'));
      this.#lentAt.set(borrower, p.membership.recordOf(borrower)?.counter ?? 0);
    }
    if (chosen.length === 0) return 0;
    this.#d.log.debug('lent hosts', { hosts: chosen.length, to: [...new Set(chosen.map((l) => l.borrower))].join(' ') });
    stats.hostsLent += chosen.length;
    await Promise.all(released);
    return chosen.length;
  }
}
