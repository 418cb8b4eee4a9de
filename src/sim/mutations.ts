import { Membership } from '../cluster/membership.js';
import type { ServerMutation } from './mount-server.js';

/** A mistake put into a run on purpose (docs/simulator.md, "Proof that it finds bugs"). */
export interface Mutation {
  /** One of the mount's (src/sim/mount-server.ts). */
  readonly server?: ServerMutation;
  /**
   * Nodes end by the rule without their last look at their live peers' records (`peersStill`
   * in src/crawl/termination.ts; docs/protocol.md, "Leaving done"): every peer's record reads
   * as unchanged since it was last seen.
   */
  readonly noLastLook?: boolean;
  /**
   * The last look alone taken out: the early look of an idle node at its last busy peers
   * (src/crawl/heartbeat.ts) is kept, so a run keeps the timing it has without the mutation
   * until a last look would have found a peer moved.
   */
  readonly noLastLookOnly?: boolean;
  /**
   * Nodes end by the rule without waiting for every live peer to say it settled in their view
   * (`peersSettled` in src/crawl/termination.ts; docs/protocol.md, "Rounds, reseeds and the end
   * of the crawl"): every view reads as settled by every peer.
   */
  readonly noSettle?: boolean;
}

/** The mutations of the command line, by name. */
export const MUTATIONS: Readonly<Record<string, Mutation>> = {
  'link-replaces': { server: { linkReplaces: true } },
  'no-last-look': { noLastLook: true },
  'no-settle': { noSettle: true },
  'no-settle-no-last-look': { noSettle: true, noLastLookOnly: true },
};

/**
 * Puts the nodes' part of a mutation in place for one run and returns what takes it out. It
 * changes the nodes' code for the whole process, so runs with it go one after another, as the
 * simulator runs them. Without the last look, the early look of an idle node at its last busy
 * peers (src/crawl/heartbeat.ts) sees no change either: timing only, the heartbeat decides.
 */
export function applyNodeMutation(mutation: Mutation | undefined): () => void {
  const m = Membership.prototype;
  const { peerStateMoved, view } = m;
  if (mutation?.noLastLook === true) m.peerStateMoved = async () => false;
  // The last look is the one peersStill takes (src/crawl/termination.ts): told apart by its caller.
  if (mutation?.noLastLookOnly === true)
    m.peerStateMoved = function (this: Membership, id: string) {
      return new Error().stack?.includes('peersStill') === true ? Promise.resolve(false) : peerStateMoved.call(this, id);
    };
  if (mutation?.noSettle === true)
    m.view = function (this: Membership) {
      return { key: view.call(this).key, peersSettled: true };
    };
  return () => {
    m.peerStateMoved = peerStateMoved;
    m.view = view;
  };
}
