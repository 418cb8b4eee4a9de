import type { Clock } from '../config/clock.js';
import type { OfferResult } from '../frontier/admission/admission.js';
import type { ScopeFilter } from '../frontier/scope.js';
import type { CrawlStats } from '../progress/stats.js';
import type { Layout } from '../store/layout.js';
import type { Referrer } from '../store/records.js';
import { countDiscovery } from './handoff-stats.js';
import { HandoffInbox, type InboxStats } from './handoff-inbox.js';
import { HandoffOutbox } from './handoff-outbox.js';
import type { Ownership } from './ownership.js';

/** The part of the frontier a hand-off feeds. */
export interface HandoffFrontier {
  /** Admission.offerRanked: the --hook priority may make the answer wait. */
  offer(url: string, hostDir: string, depth: number, referrer?: Referrer): OfferResult | Promise<OfferResult>;
  readonly hosts: ReadonlyMap<string, { readonly phase: string }>;
}

export interface ExchangeOptions {
  readonly layout: Layout;
  readonly nodeId: string;
  readonly fsync: boolean;
  readonly clock: Clock;
  readonly ownership: Ownership;
  readonly scope: ScopeFilter;
  readonly stats: CrawlStats;
}

/**
 * How often a node with room for more requests lists its inbox, and how long a link may wait
 * in a batch before the batches are written: a second, or one turn of HANDOFF_POLL_MS when
 * the batch's owner has request slots to spare (its record says so). Together they bound how
 * late a node learns of a URL another node found (about 0.5 s when it has room, 1.25 s when
 * it has none and could not start it anyway), and how many hand-off files each node writes
 * and reads: at most one per other node per second each way, four to a node with room.
 */
export const HANDOFF_POLL_MS = 250;
export const HANDOFF_FLUSH_MS = 1000;

/**
 * A node's hand-offs (docs/protocol.md, "Hand-offs"), both halves: links of other nodes'
 * hosts found on this node's pages go out (`found`), batched per owner; links sent to this
 * node come in (`receive`). With `--partition host` only: with URL partitioning every node
 * reads every links record, as before.
 */
export class HandoffExchange {
  readonly outbox: HandoffOutbox;
  readonly inbox: HandoffInbox;
  readonly #o: ExchangeOptions;

  constructor(options: ExchangeOptions) {
    this.#o = options;
    this.outbox = new HandoffOutbox({
      layout: options.layout,
      nodeId: options.nodeId,
      fsync: options.fsync,
      clock: options.clock,
      owners: options.ownership,
    });
    this.inbox = new HandoffInbox(options.layout, options.nodeId);
  }

  /** A link, found on a page this node committed, of a host this node does not crawl. */
  found(url: string, hostDir: string, depth: number, referrer?: Referrer): void {
    if (this.#o.scope.hostInScope(hostDir)) this.outbox.add(url, hostDir, depth, referrer?.url);
  }

  /** URLs that were queued for a host that moved to another node: they go to its new owner. */
  moved(hostDir: string, items: readonly { url: string; depth: number; referrer?: Referrer }[]): void {
    for (const item of items) this.outbox.add(item.url, hostDir, item.depth, item.referrer?.url);
  }

  /**
   * This node lent a host (docs/protocol.md, "Lending hosts"): its queued URLs go to the
   * borrower in a file that names the host as lent, as of its record `counter`.
   */
  lent(borrower: string, hostDir: string, items: readonly { url: string; depth: number; referrer?: Referrer }[], counter: number): void {
    this.outbox.lend(borrower, hostDir, counter);
    // Sent even if this node sent a URL of the host before, when another node had it.
    for (const item of items) this.outbox.forward(item.url, hostDir, item.depth, item.referrer?.url);
  }

  /** The live set changed. */
  viewChanged(): void {
    this.outbox.viewChanged();
  }

  /**
   * Reads this node's inbox and the inboxes of the nodes not in `live` (dead, or ended done)
   * into the frontier; `afterLeaving` (the full reseed after a node left) also removes the
   * temporary files that writers not in `live` left behind; `fresh` (a reseed that may end the
   * crawl) lists them from the server, not from the mount's cache. Counts the CPU as discovery.
   */
  async receive(
    frontier: HandoffFrontier,
    how: { live?: readonly string[]; afterLeaving?: boolean; fresh?: boolean } = {},
  ): Promise<InboxStats> {
    const { live, afterLeaving = false, fresh = false } = how;
    const cpu = process.cpuUsage();
    const { ownership, scope } = this.#o;
    const sink = {
      inScope: (hostDir: string) => scope.hostInScope(hostDir),
      owns: (hostDir: string) => ownership.ownsHost(hostDir),
      // A host on its way out (its lease was lost while this node's view still gives it the
      // host) takes nothing now: the file stays and is read again once the views agree. So
      // too when it went out while the --hook priority was asked.
      offer: (url: string, hostDir: string, depth: number, referrer?: Referrer): OfferResult | Promise<OfferResult> => {
        const releasing = (): boolean => frontier.hosts.get(hostDir)?.phase === 'releasing';
        if (releasing()) return 'full';
        const r = frontier.offer(url, hostDir, depth, referrer);
        return typeof r === 'string' ? r : r.then((v) => (v === 'known' && releasing() ? 'full' : v));
      },
      forward: (url: string, hostDir: string, depth: number, referrer?: string) => this.outbox.forward(url, hostDir, depth, referrer),
      sent: () => this.outbox.flush(),
      lent: (lender: string, counter: number, hostDirs: readonly string[]) => {
        if (ownership.noteLent(lender, counter, hostDirs).length > 0) this.outbox.viewChanged();
      },
    };
    const liveSet = live === undefined ? undefined : new Set(live);
    // The inboxes of nodes not alive first, then this node's own: a peer that takes a file
    // from an orphaned inbox writes what it sends on to this node before it removes the file,
    // so in this order a file on its way is read at one end or the other.
    const none: InboxStats = { files: 0, queued: 0, forwarded: 0, kept: 0 };
    const s = liveSet === undefined ? none : await this.inbox.readOrphans(liveSet, sink, { sweepTemps: afterLeaving, fresh });
    const own = await this.inbox.read(sink, { ...(afterLeaving && liveSet !== undefined ? { sweepTempsOf: liveSet } : {}), fresh });
    s.files += own.files;
    s.queued += own.queued;
    s.forwarded += own.forwarded;
    s.kept += own.kept;
    countDiscovery(this.#o.stats, cpu, 'handoff', s.files);
    return s;
  }
}
