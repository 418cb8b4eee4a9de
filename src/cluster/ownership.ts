import type { Partition } from '../config/crawl-config.js';
import { candidate, ownerOf, type Candidate } from './rendezvous.js';

/** What one peer lent, as this node last learned it. */
interface PeerLends {
  /** The lender's record counter this was read from (or that a hand-off named). */
  readonly counter: number;
  readonly hosts: ReadonlyMap<string, string>;
}

/** A lend learned from a hand-off, kept until the lender's record shows it (or for this many observations). */
const NOTED_LEND_OBSERVATIONS = 3;

/**
 * Who crawls what (docs/protocol.md, "Who crawls what"): with `--partition host` (default) a host belongs to the
 * rendezvous winner over the live nodes for its host directory, unless that winner lent it
 * to another live node ("Lending hosts"); with `--partition url` each URL belongs to the
 * winner for its key (and every node may write into every host's directories). Owners of
 * hosts are cached until the live set or a lend changes.
 *
 * A lend counts only when its lender is the host's rendezvous winner and its borrower is
 * live: so at most one lend counts for a host, every node that has read the same records
 * computes the same owner, and a lend ends by itself when either node leaves.
 */
export class Ownership {
  readonly #self: string;
  readonly #partition: Partition;
  #nodes: Candidate[];
  #live: Set<string>;
  #key = '';
  readonly #hostOwner = new Map<string, string>();
  /** Hosts this node lent: host directory -> borrower. */
  readonly #lent = new Map<string, string>();
  /** Hosts peers lent, from their records. */
  readonly #peerLends = new Map<string, PeerLends>();
  /** Lends to this node that a hand-off told of before the lender's record did: lender -> lend, observations left. */
  readonly #noted = new Map<string, { lends: PeerLends; left: number }>();

  constructor(self: string, partition: Partition) {
    this.#self = self;
    this.#partition = partition;
    this.#nodes = [candidate(self)];
    this.#live = new Set([self]);
    this.#key = self;
  }

  get partition(): Partition {
    return this.#partition;
  }

  get liveCount(): number {
    return this.#nodes.length;
  }

  /**
   * Sets the live nodes (this one must be among them); true when the set changed. `lost`: nodes
   * that left since the last call, some perhaps live again in a new process (started again
   * with their id): lends to those end as if they had not come back.
   */
  setLive(ids: readonly string[], lost: readonly string[] = []): boolean {
    const key = [...ids].sort().join('\n');
    const back = lost.filter((id) => ids.includes(id));
    if (key === this.#key && back.length === 0) return false;
    this.#key = key;
    this.#nodes = ids.map(candidate);
    this.#live = new Set(ids);
    this.#hostOwner.clear();
    // This node's lends that count no more end now (the borrower left: it gets nothing back
    // if it returns; or the host's rendezvous winner is another node now).
    for (const [hostDir, borrower] of this.#lent) {
      if (!this.#live.has(borrower) || back.includes(borrower) || this.rendezvousOwner(hostDir) !== this.#self) this.#lent.delete(hostDir);
    }
    return true;
  }

  /** The node that owns a host (host partitioning). */
  hostOwner(hostDir: string): string {
    let owner = this.#hostOwner.get(hostDir);
    if (owner === undefined) {
      const winner = this.rendezvousOwner(hostDir);
      const borrower = winner === this.#self ? this.#lent.get(hostDir) : this.#lentBy(winner, hostDir);
      owner = borrower !== undefined && this.#live.has(borrower) ? borrower : winner;
      this.#hostOwner.set(hostDir, owner);
    }
    return owner;
  }

  /** The host's owner by rendezvous hashing alone (the only node that may lend it). */
  rendezvousOwner(hostDir: string): string {
    return ownerOf(hostDir, this.#nodes) ?? this.#self;
  }

  #lentBy(lender: string, hostDir: string): string | undefined {
    return this.#noted.get(lender)?.lends.hosts.get(hostDir) ?? this.#peerLends.get(lender)?.hosts.get(hostDir);
  }

  /** True when this node crawls the host (always, with URL partitioning). */
  ownsHost(hostDir: string): boolean {
    return this.#partition === 'url' || this.hostOwner(hostDir) === this.#self;
  }

  /** True when this node crawls the URL with this key on this host. */
  ownsUrl(hostDir: string, key: string): boolean {
    if (this.#partition === 'host') return this.hostOwner(hostDir) === this.#self;
    return this.#nodes.length === 1 || ownerOf(key, this.#nodes) === this.#self;
  }

  /** This node lends a host it owns by rendezvous to a live peer (docs/protocol.md, "Lending hosts"). */
  lend(hostDir: string, borrower: string): void {
    if (this.rendezvousOwner(hostDir) !== this.#self || !this.#live.has(borrower) || borrower === this.#self) {
      throw new Error(`cannot lend ${hostDir} to ${borrower}`);
    }
    this.#lent.set(hostDir, borrower);
    this.#hostOwner.delete(hostDir);
  }

  /** The lends this node publishes in its record (those that count: setLive ends the others). */
  ownLends(): Record<string, string> | undefined {
    return this.#lent.size === 0 ? undefined : Object.fromEntries(this.#lent);
  }

  /** How many hosts this node has lent (and still counts as lent). */
  get lentCount(): number {
    return this.#lent.size;
  }

  /**
   * Peers' lends, from the records just read (one call per observation of the nodes
   * directory). Returns true when the owner of some host may have changed.
   */
  setPeerLends(
    records: Iterable<{ readonly id: string; readonly counter: number; readonly lent?: Readonly<Record<string, string>> }>,
  ): boolean {
    let changed = false;
    const seen = new Set<string>();
    for (const r of records) {
      if (r.id === this.#self) continue;
      seen.add(r.id);
      const hosts = new Map(Object.entries(r.lent ?? {}));
      const before = this.#peerLends.get(r.id);
      if (before === undefined ? hosts.size > 0 : !sameLends(before.hosts, hosts)) changed = true;
      this.#peerLends.set(r.id, { counter: r.counter, hosts }); // kept when empty: its counter dates later hand-offs
      const noted = this.#noted.get(r.id);
      if (noted !== undefined && (r.counter >= noted.lends.counter || --noted.left <= 0)) {
        this.#noted.delete(r.id);
        for (const [h, b] of noted.lends.hosts) if (hosts.get(h) !== b) changed = true;
      }
    }
    for (const [id, l] of [...this.#peerLends]) {
      if (seen.has(id)) continue;
      this.#peerLends.delete(id); // its record is gone (or it is not live): so are its lends
      if (l.hosts.size > 0) changed = true;
    }
    for (const id of [...this.#noted.keys()]) {
      if (seen.has(id)) continue;
      this.#noted.delete(id);
      changed = true;
    }
    if (changed) this.#hostOwner.clear();
    return changed;
  }

  /**
   * A hand-off from `lender` says it lent these hosts to this node as of its record
   * `counter` (written before the hand-off): they count at once, before this node reads that
   * record, so that it does not send their URLs back. Returns the hosts that count now.
   */
  noteLent(lender: string, counter: number, hostDirs: readonly string[]): string[] {
    const counted: string[] = [];
    const known = this.#peerLends.get(lender);
    if (known !== undefined && known.counter >= counter) return counted; // the record says more recent things
    const previous = this.#noted.get(lender)?.lends.hosts;
    const hosts = new Map(previous);
    for (const h of hostDirs) {
      if (this.rendezvousOwner(h) !== lender) continue; // only the rendezvous winner may lend
      hosts.set(h, this.#self);
      this.#hostOwner.delete(h);
      counted.push(h);
    }
    if (hosts.size > 0) this.#noted.set(lender, { lends: { counter, hosts }, left: NOTED_LEND_OBSERVATIONS });
    return counted;
  }

  /** Every lend that counts now, host directory -> borrower (for a snapshot before the live set changes). */
  lendsInForce(): Map<string, string> {
    const out = new Map<string, string>();
    const hosts = new Set<string>(this.#lent.keys());
    for (const l of this.#peerLends.values()) for (const h of l.hosts.keys()) hosts.add(h);
    for (const n of this.#noted.values()) for (const h of n.lends.hosts.keys()) hosts.add(h);
    for (const h of hosts) {
      const owner = this.hostOwner(h);
      if (owner !== this.rendezvousOwner(h)) out.set(h, owner);
    }
    return out;
  }
}

function sameLends(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
