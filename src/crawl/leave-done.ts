import type { SelfStatus } from '../cluster/self-record.js';
import type { Parts } from './node-parts.js';
import { nothingInHand } from './work-left.js';

/**
 * How a node whose crawl ended by the rule leaves (docs/protocol.md, "Leaving done"). Called
 * last, after its heartbeat stopped, its batches were written and its leases released.
 *
 * With hand-offs, and with nothing queued, in flight or unsent (`unsent`: batches were still
 * waiting when it stopped, written just now, after its last reseed; or links of a host left
 * alone for this run that its errs records could not take, HostRobots.recordSetAside), it writes a last record in
 * state `done` (whole, temp + rename, like every heartbeat) and leaves it in place: peers
 * that see it read its inbox instead of every links record, and do not take its hosts over
 * until a link of theirs arrives. A node killed after this write leaves the same state as
 * one that exits: nothing runs after it but the removal of records. The last node to end
 * (no live peer left) removes its own record and the done records of the others.
 *
 * Otherwise (no hand-offs, or something left) it removes its record, as before: peers count
 * it lost and reseed fully. Nothing here throws.
 */
export async function leaveDone(p: Parts, status: SelfStatus, unsent = false): Promise<void> {
  const m = p.membership;
  try {
    const holdsNothing =
      p.handoffs !== undefined &&
      !unsent &&
      !p.handoffs.outbox.waiting &&
      nothingInHand({ queued: p.frontier.queued, inFlight: p.requests.inFlight }) &&
      [...p.leases.held()].length === 0;
    if (holdsNothing && m.livePeers().length > 0) {
      await m.beat({ ...status, state: 'done' });
      // The last one to write done sees every other done record, or a peer still at work.
      await m.observe();
      if (m.livePeers().length > 0) return;
    }
    await m.removeDoneRecords();
  } catch {
    // The mount failed: peers count this node lost (a full reseed), as for a node that dies.
  }
  await m.leave().catch(() => undefined);
}
