import { createHash } from 'node:crypto';
import { isDeadLocalProcess } from './local-liveness.js';
import type { NodeRecord } from './node-record.js';

/** Another node as this node sees it. */
export interface Peer {
  record: NodeRecord;
  /** Monotonic time at which its counter was last seen to change (or it was first seen). */
  lastChange: number;
  alive: boolean;
  /** Monotonic time since which it has been seen idle in its current idle epoch. */
  idleSeenSince: number | undefined;
  /** Monotonic time at which the observation that last read its record began. */
  readBegan: number;
  /**
   * Its current record was written after this monotonic time: when the read that still saw the
   * record before it began (-Infinity for the first record seen).
   */
  wroteAfter: number;
}

/**
 * Notes the record of peer `id` just read at monotonic time `now`, by an observation that began
 * at `began` (Membership.observe; docs/protocol.md, "Nodes and liveness"): the peer is alive while its counter keeps changing within `deadAfterMs`,
 * and dead at once when its process of this machine no longer runs or it says `done`. A peer
 * first seen dead (or stopping, or done) counts as having changed `deadAfterMs` ago. Its idle
 * time starts again when it turns idle or enters another idle epoch. Updates `peers` in place.
 * True when the record names another process than the one before (started again with its id).
 */
export function seePeer(
  peers: Map<string, Peer>,
  id: string,
  record: NodeRecord,
  now: number,
  began: number,
  deadAfterMs: number,
): boolean {
  const peer = peers.get(id);
  if (peer === undefined) {
    const dead = isDeadLocalProcess(record) || record.state === 'stopping' || record.state === 'done';
    peers.set(id, {
      record,
      lastChange: dead ? now - deadAfterMs : now,
      alive: !dead,
      idleSeenSince: record.state === 'idle' ? now : undefined,
      readBegan: began,
      wroteAfter: -Infinity,
    });
    return false;
  }
  const was = peer.record.incarnation;
  if (record.counter !== peer.record.counter) {
    peer.lastChange = now;
    peer.wroteAfter = peer.readBegan;
  }
  peer.readBegan = began;
  const idleNow = record.state === 'idle';
  if (!idleNow || record.idleEpoch !== peer.record.idleEpoch) peer.idleSeenSince = idleNow ? now : undefined;
  else peer.idleSeenSince ??= now;
  peer.record = record;
  // Silent for dead-after as of `began`, not `now`: a record that did not change is news as of
  // its read only, and a read that took long (this process paused between it and `now`) would
  // count a peer dead for a silence that was this node's own.
  peer.alive = began - peer.lastChange < deadAfterMs && !isDeadLocalProcess(record) && record.state !== 'done';
  return was !== undefined && record.incarnation !== undefined && was !== record.incarnation;
}

/**
 * The monotonic time since which every live node, this one (idle since `selfIdleSince`)
 * included, has been seen idle without a break, or undefined when one of them is not idle.
 */
export function allIdleSince(selfIdleSince: number | undefined, peers: ReadonlyMap<string, Peer>): number | undefined {
  let since = selfIdleSince;
  if (since === undefined) return undefined;
  for (const peer of peers.values()) {
    if (!peer.alive) continue;
    if (peer.idleSeenSince === undefined) return undefined;
    since = Math.max(since, peer.idleSeenSince);
  }
  return since;
}

/**
 * Monotonic time after which every live peer is known to have written a record (its counter
 * changed since a read of it that began then); Infinity with no live peer. A peer killed
 * before that time wrote nothing since, however alive and idle its last record looks
 * (docs/protocol.md, "Rounds, reseeds and the end of the crawl").
 */
export function peersWroteAfter(peers: ReadonlyMap<string, Peer>): number {
  let t = Infinity;
  for (const peer of peers.values()) if (peer.alive) t = Math.min(t, peer.wroteAfter);
  return t;
}

/**
 * The live peers not seen idle while this node is idle, when there are 1 to `most` of them:
 * the crawl ends when they go idle (docs/protocol.md, "Rounds, reseeds and the end of the
 * crawl"). Undefined when this node is not idle, or when no peer or more than `most` are busy.
 */
export function lastBusyPeers(selfIdleSince: number | undefined, peers: ReadonlyMap<string, Peer>, most: number): string[] | undefined {
  if (selfIdleSince === undefined) return undefined;
  const busy: string[] = [];
  for (const [id, peer] of peers) {
    if (!peer.alive || peer.idleSeenSince !== undefined) continue;
    if (busy.length === most) return undefined;
    busy.push(id);
  }
  return busy.length > 0 ? busy : undefined;
}

/**
 * A digest of the live nodes, this one (`selfId` in idle epoch `selfEpoch`) included, and their
 * idle epochs (NodeRecord.settled): two nodes that saw the same nodes in the same epochs have
 * the same key, whatever their clocks (docs/protocol.md, "Rounds, reseeds and the end of the crawl").
 */
export function viewKey(selfId: string, selfEpoch: number, peers: ReadonlyMap<string, Peer>): string {
  const parts = [`${selfId} ${selfEpoch}`];
  for (const [id, peer] of peers) if (peer.alive) parts.push(`${id} ${peer.record.idleEpoch}`);
  return createHash('sha256').update(parts.sort().join('\n')).digest('hex').slice(0, 16);
}

/** True when every live peer's last record says it settled in view `key` (a record of an older version, without the field, counts). */
export function peersSettledIn(key: string, peers: ReadonlyMap<string, Peer>): boolean {
  for (const peer of peers.values()) if (peer.alive && peer.record.settled !== undefined && peer.record.settled !== key) return false;
  return true;
}
