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
 */
export function seePeer(peers: Map<string, Peer>, id: string, record: NodeRecord, now: number, began: number, deadAfterMs: number): void {
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
    return;
  }
  if (record.counter !== peer.record.counter) {
    peer.lastChange = now;
    peer.wroteAfter = peer.readBegan;
  }
  peer.readBegan = began;
  const idleNow = record.state === 'idle';
  if (!idleNow || record.idleEpoch !== peer.record.idleEpoch) peer.idleSeenSince = idleNow ? now : undefined;
  else peer.idleSeenSince ??= now;
  peer.record = record;
  peer.alive = now - peer.lastChange < deadAfterMs && !isDeadLocalProcess(record) && record.state !== 'done';
}
