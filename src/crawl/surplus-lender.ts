import type { NodeRecord } from '../cluster/node-record.js';
import type { Ownership } from '../cluster/ownership.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { Frontier } from '../frontier/frontier.js';
import type { HostState } from '../frontier/host-state.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import { chooseLends, demand, idleShare, lendingShare, MAX_LENDS_PER_BEAT, MAX_LENT, type LendingPeer } from './host-lending.js';
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
   * per two of a peer's heartbeats; when none of its hosts waits for a slot, one host to an
   * idle peer that is its to serve (idleShare). Each lent host's queue goes into the outbox at once, in a
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
    // While a full reseed is due (a node was lost) a host may have URLs named only by records not
    // read for it: lent before that reseed, no queue would hold them (the borrower reads only its own records).
    if (p.reseeder.fullDue) return 0;
    // A link that did not fit in memory is found again by this node's reseeds of its own records: it stays put.
    if (stats.cut.frontierFull > 0 || ownership.lentCount >= MAX_LENT) return 0;
    const loads = [...hostLoads(p.frontier)];
    const used = demand(loads, config.perHost);
    const balance = used - config.concurrency;
    const peers = p.membership.livePeers().filter((r) => r.state === 'crawling' || r.state === 'idle' || r.state === 'waiting');
    const canBorrow = (r: NodeRecord): boolean => {
      const at = this.#lentAt.get(r.id);
      return at === undefined || r.counter >= at + 2;
    };
    // `toIdle`: the hosts go to idle peers though none waits for a slot here (see below).
    let plan = { surplus: 0, share: [] as LendingPeer[], most: MAX_LENDS_PER_BEAT, toIdle: false };
    if (balance > 0) {
      const { surplus, peers: share } = lendingShare(config.nodeId, [
        { id: config.nodeId, balance, canBorrow: false },
        ...peers.map((r) => ({ id: r.id, balance: (r.wanting ?? 0) - (r.spare ?? 0), canBorrow: canBorrow(r) })),
      ]);
      plan = { ...plan, surplus, share };
    } else {
      // No host here waits for a slot, yet a peer may have nothing to do (this node's CPU may
      // be the limit): one host each to the idle peers that are this node's to serve, its
      // shortest queues first, keeping at least one host with work. Every host has a slot, so
      // it may have requests in flight: it goes all the same, its lease released once they end.
      const lenders = peers.filter((r) => r.state === 'crawling');
      const idle = peers.filter((r) => r.state === 'idle');
      const share = idleShare(
        config.nodeId,
        [
          { id: config.nodeId, slots: used },
          ...lenders.map((r) => ({ id: r.id, slots: config.concurrency + (r.wanting ?? 0) - (r.spare ?? 0) })),
        ],
        idle.map((r) => r.id),
        config.perHost,
      ).filter((s) => canBorrow(p.membership.recordOf(s.id)!));
      const withWork = loads.filter((h) => h.queued + h.inFlight > 0).length;
      plan = { surplus: share.length * config.perHost, share, most: Math.min(share.length, withWork - 1), toIdle: true };
    }
    if (plan.share.length === 0 || plan.most <= 0) return 0;
    const hosts: HostState[] = [];
    for (const h of p.frontier.hosts.values()) {
      if (h.phase !== 'ready' || h.retries.length > 0 || h.robots === undefined || h.leaseLost) continue;
      if (h.politeness.inFlight > 0 && !plan.toIdle) continue;
      if (ownership.rendezvousOwner(h.dir) === config.nodeId) hosts.push(h);
    }
    const chosen = chooseLends({
      surplus: plan.surplus,
      perHost: config.perHost,
      hosts,
      peers: plan.share,
      most: Math.min(plan.most, MAX_LENT - ownership.lentCount),
      shortestFirst: plan.toIdle,
    });
    const released: Promise<void>[] = [];
    for (const { host: dir, borrower } of chosen) {
      const host = p.frontier.hosts.get(dir)!;
      const items = p.frontier.dropHost(host);
      ownership.lend(dir, borrower);
      handoffs.lent(borrower, dir, items, p.membership.counter + 1);
      // A host with requests in flight is let go after them: the heartbeat does not wait (the
      // borrower finds the lease held and tries again at its next heartbeat).
      const gone = p.keeper.letGo(host, 'moved');
      if (host.politeness.inFlight === 0) released.push(gone);
      this.#lentAt.set(borrower, p.membership.recordOf(borrower)?.counter ?? 0);
    }
    if (chosen.length === 0) return 0;
    this.#d.log.debug('lent hosts', { hosts: chosen.length, to: [...new Set(chosen.map((l) => l.borrower))].join(' ') });
    stats.hostsLent += chosen.length;
    await Promise.all(released);
    return chosen.length;
  }
}
