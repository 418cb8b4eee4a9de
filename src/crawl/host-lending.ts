/**
 * Lending hosts (docs/protocol.md, "Lending hosts"): which hosts a node above the cluster's
 * even balance lends, and to which peers below it. Pure functions of what the node knows, so
 * that every rule is tested (test/unit/crawl/host-lending.test.ts).
 */

/** A host's share of a node's request slots. */
export interface HostLoad {
  readonly dir: string;
  /** URLs queued in memory. */
  readonly queued: number;
  readonly inFlight: number;
}

/** A host the node could lend: it owns it by rendezvous, holds its lease, and nothing of it is in flight. */
export type LendableHost = Pick<HostLoad, 'dir' | 'queued'>;

/** A peer this node may lend to, with the slots of its room that are this node's to fill (shareOfRoom). */
export interface LendingPeer {
  readonly id: string;
  readonly room: number;
}

/** A host whose queue is shorter than this is not worth a move (lease, listing, a hand-off: about a second). */
export const MIN_LEND_QUEUE = 2;
/** Most hosts a node lends at one heartbeat. */
export const MAX_LENDS_PER_BEAT = 8;
/** Most hosts a node has lent at once (they are listed in its heartbeat record). */
export const MAX_LENT = 256;

/** Request slots the node's hosts can use now: each at most --per-host. */
export function demand(hosts: Iterable<HostLoad>, perHost: number): number {
  let slots = 0;
  for (const h of hosts) slots += Math.min(perHost, h.queued + h.inFlight);
  return slots;
}

/** Slots the node could fill and has no work for: what it says in its record. */
export function spareSlots(concurrency: number, used: number): number {
  return Math.max(0, concurrency - used);
}

/** A lender's slots above the even balance, or a borrower's below it. */
export interface SlotBalance {
  readonly id: string;
  readonly slots: number;
}

/**
 * Which borrowers' room is this node's to fill. Every lender computes the same split from the
 * same records: lenders in order of their surplus (most first, then by id) take the room of
 * the borrowers in order of its size (most first, then by id). So several busy nodes do not
 * all lend to the one node that went idle, each up to all its room, and leave it with more
 * hosts than it can serve.
 */
export function shareOfRoom(self: string, lenders: readonly SlotBalance[], borrowers: readonly SlotBalance[]): LendingPeer[] {
  const order = (a: SlotBalance, b: SlotBalance): number => b.slots - a.slots || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const left = [...borrowers]
    .filter((b) => b.slots > 0)
    .sort(order)
    .map((b) => ({ id: b.id, room: b.slots }));
  for (const lender of [...lenders].filter((l) => l.slots > 0).sort(order)) {
    let need = lender.slots;
    const mine: LendingPeer[] = [];
    for (const b of left) {
      if (need <= 0) break;
      const take = Math.min(need, b.room);
      if (take <= 0) continue;
      b.room -= take;
      need -= take;
      mine.push({ id: b.id, room: take });
    }
    if (lender.id === self) return mine;
  }
  return [];
}

/** A node as the lending sees it: its slot balance (slots its hosts want less --concurrency) and whether it may borrow now. */
export interface NodeBalance {
  readonly id: string;
  readonly balance: number;
  readonly canBorrow: boolean;
}

/**
 * The balance every node would have if the wanted slots were spread evenly: the mean of the
 * nodes' balances, rounded down, and never below 0. At 0 (the cluster has slots to spare) a
 * node lends what its hosts want beyond --concurrency to nodes with free slots. Above 0
 * (every slot is taken) hosts still move from a node with many waiting for a slot to one with
 * few: the nodes then run out of work together, instead of one idle while another still has
 * hosts waiting (docs/benchmarks-log.md, "Lending by balance").
 */
export function evenBalance(balances: readonly number[]): number {
  if (balances.length === 0) return 0;
  let sum = 0;
  for (const b of balances) sum += b;
  return Math.max(0, Math.floor(sum / balances.length));
}

/**
 * What this node lends and to whom it may: its surplus over the even balance, and its share
 * (shareOfRoom) of the room the nodes below that balance have. Every node computes the same
 * split from the same records.
 */
export function lendingShare(self: string, nodes: readonly NodeBalance[]): { surplus: number; peers: LendingPeer[] } {
  const level = evenBalance(nodes.map((n) => n.balance));
  const surplus = (nodes.find((n) => n.id === self)?.balance ?? 0) - level;
  if (surplus <= 0) return { surplus: 0, peers: [] };
  const lenders = nodes.map((n) => ({ id: n.id, slots: n.balance - level }));
  const borrowers = nodes.filter((n) => n.canBorrow && n.id !== self).map((n) => ({ id: n.id, slots: level - n.balance }));
  return { surplus, peers: shareOfRoom(self, lenders, borrowers) };
}

/**
 * The idle peers whose share is this node's when no node's hosts want more slots than it has
 * (docs/protocol.md, "Lending hosts"): each node whose hosts want at least two hosts' slots
 * (`slots`: the slots its hosts want) may give one host to an idle peer, so that a node whose
 * CPU is the limit shares its hosts. Every node computes the same split from the same
 * records: the idle peers, by id, go in turn to those nodes, most wanted slots first, then by
 * id; so several nodes do not all give one to the same idle peer.
 */
export function idleShare(self: string, lenders: readonly SlotBalance[], idle: readonly string[], perHost: number): LendingPeer[] {
  const order = lenders.filter((l) => l.slots >= 2 * perHost).sort((a, b) => b.slots - a.slots || (a.id < b.id ? -1 : 1));
  if (order.length === 0) return [];
  return [...idle]
    .sort()
    .filter((_, k) => order[k % order.length]!.id === self)
    .map((id) => ({ id, room: perHost }));
}

/**
 * The hosts to lend and to whom: while the node has a surplus over the even balance
 * (`surplus` > 0), the host with the longest queue (with `shortestFirst`, the shortest) goes
 * to the peer with the most room in its share, each lend taking up to --per-host slots from
 * both. Hosts with short queues stay.
 */
export function chooseLends(o: {
  readonly surplus: number;
  readonly perHost: number;
  readonly hosts: readonly LendableHost[];
  readonly peers: readonly LendingPeer[];
  readonly most: number;
  readonly shortestFirst?: boolean;
}): { host: string; borrower: string }[] {
  const out: { host: string; borrower: string }[] = [];
  let surplus = o.surplus;
  const room = new Map(o.peers.filter((p) => p.room > 0).map((p) => [p.id, p.room]));
  const sign = o.shortestFirst === true ? -1 : 1;
  const hosts = o.hosts.filter((h) => h.queued >= MIN_LEND_QUEUE).sort((a, b) => sign * (b.queued - a.queued) || (a.dir < b.dir ? -1 : 1));
  for (const h of hosts) {
    if (surplus <= 0 || out.length >= o.most || room.size === 0) break;
    let best: string | undefined;
    for (const [id, r] of room) if (best === undefined || r > room.get(best)! || (r === room.get(best) && id < best)) best = id;
    const slots = Math.min(o.perHost, h.queued);
    out.push({ host: h.dir, borrower: best! });
    surplus -= slots;
    const left = room.get(best!)! - slots;
    if (left > 0) room.set(best!, left);
    else room.delete(best!);
  }
  return out;
}
