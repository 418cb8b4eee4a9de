import { candidate, ownerOf, type Candidate } from './rendezvous.js';

/** One change of the live set in which nodes left done. */
interface Departure {
  /** The live nodes before the change. */
  readonly before: readonly Candidate[];
  /** The nodes that left done in it. */
  readonly done: ReadonlySet<string>;
}

/**
 * What a node skips because the nodes that left were done (docs/protocol.md, "Leaving done").
 * A node that left done held nothing but its hand-off inbox: every URL of its hosts found so
 * far is fetched, or in its inbox, or on its way there as a hand-off. So the hosts this node
 * gained from it are *quiet*: they need no lease, listing or reading of their records now (a
 * link of theirs that arrives later in a hand-off adopts its host as any link does), and the
 * full reseed that follows a lost node is not needed.
 *
 * A host is quiet when its owner among the live nodes before some departure was one of the
 * nodes that left done in it. A full reseed (a node was lost, or this node's first) reads and
 * adopts everything, so it forgets the departures: what it covers needs no shortcut.
 */
export class DoneLeavers {
  #departures: Departure[] = [];

  /** Nodes left done: `before` is the live set as it was. */
  left(before: readonly string[], done: readonly string[]): void {
    if (done.length === 0) return;
    this.#departures.push({ before: before.map(candidate), done: new Set(done) });
  }

  /** A full reseed is starting: it covers every host. */
  forget(): void {
    this.#departures = [];
  }

  /** True when the host came to this node from a node that left done (since the last full reseed). */
  isQuiet(hostDir: string): boolean {
    for (const d of this.#departures) {
      const owner = ownerOf(hostDir, d.before);
      if (owner !== undefined && d.done.has(owner)) return true;
    }
    return false;
  }
}
