/** What a node publishes in nodes/<id>.json every few seconds (docs/protocol.md, "Nodes and liveness"). */
export interface NodeRecord {
  readonly id: string;
  /** Grows by one at every heartbeat: others time liveness by watching it change. */
  readonly counter: number;
  readonly state: NodeState;
  /** Grows each time the node becomes idle: a change means it was busy in between. */
  readonly idleEpoch: number;
  readonly hostname: string;
  readonly pid: number;
  /** Linux boot id of the machine, so a restart on the same machine can tell its own dead. */
  readonly bootId: string;
  readonly heartbeatMs: number;
  readonly startedAt: string;
  /**
   * Random per start of the node's process: tells it from an earlier process that ran the same
   * node id, whose leases it does not hold (docs/protocol.md, "Who crawls what"). Absent in
   * records of older versions.
   */
  readonly incarnation?: string;
  /** Wall-clock time of this write, for people (never compared across machines). */
  readonly updatedAt: string;
  readonly round: number;
  readonly hostsOwned: number;
  readonly pages: number;
  /** Errs records written that are failures: URLs robots.txt excludes are counted in `excluded` (docs/errors.md). */
  readonly errors: number;
  /** Errs records written for URLs robots.txt excludes: never requested, no failure. Absent in records of older versions. */
  readonly excluded?: number;
  readonly queued: number;
  readonly inFlight: number;
  /** Pages per second over the last interval. */
  readonly rate: number;
  /**
   * Request slots this node could fill and has no work for: --concurrency less what its hosts
   * can use (each at most --per-host). `wanting` less `spare` is the node's balance, which
   * decides who lends to whom (docs/protocol.md, "Lending hosts"). Absent in records of older
   * versions: counted as 0.
   */
  readonly spare?: number;
  /** Request slots its hosts want beyond --concurrency. Absent: 0. */
  readonly wanting?: number;
  /** Hosts this node owns by rendezvous and has lent, host directory -> borrower's id. */
  readonly lent?: Readonly<Record<string, string>>;
  /**
   * The view (PeerLiveness `viewKey`: the live nodes and their idle epochs) in which a reseed
   * of this node, begun after it saw every live node idle, found nothing; '' when none since it
   * last turned idle (docs/protocol.md, "Rounds, reseeds and the end of the crawl"). Absent in
   * records of older versions: taken as settled.
   */
  readonly settled?: string;
}

/**
 * `starting`: not yet crawling; `crawling`: has work; `idle`: a reseed found nothing;
 * `waiting`: nothing to fetch now but retries are due later; `paused`: by `mountcrawl pause`,
 * it sends no request; `stopping`: shutting down (`draining`: by `mountcrawl drain`);
 * `done`: ended after a last reseed found nothing, holding nothing but its hand-off inbox
 * (docs/protocol.md, "Leaving done"): its last record, written whole, never rewritten.
 */
export type NodeState = 'starting' | 'crawling' | 'idle' | 'waiting' | 'paused' | 'stopping' | 'draining' | 'done';

export function asNodeRecord(value: unknown): NodeRecord {
  const r = value as Partial<NodeRecord> | null;
  if (r === null || typeof r !== 'object' || typeof r.id !== 'string' || typeof r.counter !== 'number') {
    throw new TypeError('not a node record');
  }
  return r as NodeRecord;
}
