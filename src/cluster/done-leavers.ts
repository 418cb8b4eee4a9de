import { candidate, ownerOf, type Candidate } from './rendezvous.js';

/** One change of the live set in which nodes left done. */
interface Departure {
  /** The live nodes before the change. */
  readonly before: readonly Candidate[];
  /** The nodes that left done in it. */
  readonly done: ReadonlySet<string>;
  /** The lends in force before it, host directory -> borrower (docs/protocol.md, "Lending hosts"). */
  readonly lent: ReadonlyMap<string, string>;
}

/**
 * What a node skips because the nodes that left were done (docs/protocol.md, "Leaving done").
 * A node that left done held nothing but its hand-off inbox: every URL of its hosts found so
 * far is fetched, or in its inbox, or on its way there as a hand-off. So the hosts this node
 * gained from it are *quiet*: they need no lease, listing or reading of their records now (a
 * link of theirs that arrives later in a hand-off adopts its host as any link does), and the
 * full reseed that follows a lost node is not needed.
 *
 * A host is quiet when its rendezvous winner among the live nodes before some departure, or
 * the node it was lent to then, was one of the nodes that left done in it. (A host lent by a
 * node that left done to one still live moves from that live node with its queue, as any
 * host moving between live nodes: there is nothing to read for it either.) A full reseed (a
 * node was lost, or this node's first) reads and adopts everything, so it forgets the
 * departures: what it covers needs no shortcut.
 */
export class DoneLeavers {
  #departures: Departure[] = [];

  /** Nodes left done: `before` is the live set as it was, `lent` the lends in force then. */
  left(before: readonly string[], done: readonly string[], lent: ReadonlyMap<string, string> = new Map()): void {
    if (done.length === 0) return;
    this.#departures.push({ before: before.map(candidate), done: new Set(done), lent });
  }

  /** A full reseed is starting: it covers every host. */
  forget(): void {
    this.#departures = [];
  }

  /** True when the host came to this node from a node that left done (since the last full reseed). */
  isQuiet(hostDir: string): boolean {
    for (const d of this.#departures) {
      // Its rendezvous winner left done: it held nothing, or lent the host to a live node,
      // which sends on its queue when the host moves (docs/protocol.md, "Lending hosts").
      const winner = ownerOf(hostDir, d.before);
      if (winner !== undefined && d.done.has(winner)) return true;
      // Its borrower left done: it held nothing.
      const borrower = d.lent.get(hostDir);
      if (borrower !== undefined && d.done.has(borrower)) return true;
    }
    return false;
  }
}
