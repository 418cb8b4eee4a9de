import type { NodeRecord } from '../cluster/node-record.js';

/**
 * When a crawl is over (docs/protocol.md, "Rounds, reseeds and the end of the crawl"): a node whose frontier is empty and
 * whose reseed found nothing decides what to do next. The rule is a pure function of what
 * the node saw, so that every case is tested (test/unit/crawl/termination.test.ts).
 */

/** What a node knows after a reseed that found nothing (and with nothing queued or in flight). */
export interface IdleView {
  /** --watch: never end, keep polling for new seeds and links. */
  readonly watch: boolean;
  /** Monotonic time since which every live node (this one included) was seen idle, as read before the reseed began. */
  readonly allIdleBefore: number | undefined;
  /** Monotonic time at which the reseed began. */
  readonly reseedStart: number;
  /**
   * Monotonic time after which every live peer wrote a record, as read before the reseed began
   * (Membership.peersWroteAfter; Infinity with no live peer).
   */
  readonly peersWroteAfter: number;
  /**
   * Every live peer's record says a reseed of its own, begun after it saw every live node idle,
   * found nothing, in the view (live nodes and idle epochs) this node's reseed began and ended in
   * (Membership.view; false when this reseed did not begin after all were idle, or the view moved).
   */
  readonly peersSettled: boolean;
  /** How many times the nodes directory has been read (membership observations). */
  readonly observations: number;
  /** True when this node was idle already before this reseed (its idle record is published). */
  readonly wasIdle: boolean;
  /** True when every live node is seen idle now (after the reseed). */
  readonly allIdleNow: boolean;
  /** True when no live peer is known. */
  readonly alone: boolean;
  readonly heartbeatMs: number;
}

/** What the node does next. */
export type IdleStep =
  /** The crawl is complete: stop. */
  | { readonly kind: 'complete' }
  /** Reseed again at once (the next reseed may be the last one); `publishIdle`: beat now. */
  | { readonly kind: 'reseed'; readonly publishIdle: boolean }
  /** Wait `ms` (or until woken), then reseed; `publishIdle`: beat now. */
  | { readonly kind: 'wait'; readonly ms: number; readonly publishIdle: boolean };

/** Waits between reseeds of a node in --watch that is idle (at least this long). */
export const WATCH_POLL_MS = 2_000;
/** Waits between reseeds of an idle node alone: the next (incremental) reseed can confirm the end at once. */
export const ALONE_POLL_MS = 50;

/**
 * The end: a reseed that began after every live node was seen idle found nothing (and the
 * nodes directory was read at least twice, so "every live node" is not a first guess), and
 * every live peer wrote a record after they were all idle: it lived after every hand-off to it
 * was written, so it reads them (a peer killed while idle is found dead instead, and the full
 * reseed that follows takes its hosts); and that record says it did read them, in a reseed of
 * its own that found nothing in the same view (a peer killed before then, after it proved
 * itself alive, is found dead too: it never says so).
 * Otherwise a node that just went idle publishes it at once (peers wait for its record) and,
 * if every peer was idle already, reseeds again at once: that reseed, begun now, may be the
 * last one. Else it waits: alone, briefly; with peers, for their next heartbeats.
 */
export function afterEmptyReseed(v: IdleView): IdleStep {
  if (
    !v.watch &&
    v.allIdleBefore !== undefined &&
    v.allIdleBefore < v.reseedStart &&
    v.peersWroteAfter >= v.allIdleBefore &&
    v.peersSettled &&
    v.observations >= 2
  ) {
    return { kind: 'complete' };
  }
  const publishIdle = !v.wasIdle;
  if (publishIdle && !v.watch && v.allIdleBefore === undefined && v.allIdleNow) return { kind: 'reseed', publishIdle };
  const ms = v.watch ? Math.max(v.heartbeatMs, WATCH_POLL_MS) : v.alone ? ALONE_POLL_MS : v.heartbeatMs;
  return { kind: 'wait', ms, publishIdle };
}

/** What the last look needs of the membership. */
export interface PeerRecords {
  livePeers(): readonly Pick<NodeRecord, 'id'>[];
  peerStateMoved(nodeId: string): Promise<boolean>;
}

/**
 * The last look before a node ends, with hand-offs (docs/protocol.md, "Leaving done"): true
 * when every live peer's record still says what it said when last seen. A peer that ended
 * done since may hold, in its inbox, a link this node sent on while it still counted that
 * peer alive, and which no node that saw it done may read any more: the node does not end,
 * and reads that inbox once it has seen the record. A record that cannot be read counts as
 * moved (a peer that stays unreadable stops counting as live after --dead-after).
 */
export async function peersStill(m: PeerRecords): Promise<boolean> {
  const moved = await Promise.all(m.livePeers().map((r) => m.peerStateMoved(r.id).catch(() => true)));
  return !moved.includes(true);
}
