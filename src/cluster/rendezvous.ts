/**
 * Rendezvous (highest random weight) hashing (docs/protocol.md, "Who crawls what"): every node computes the same owner
 * for an item from the same set of live nodes, ownership spreads evenly, and when a node
 * joins or leaves only the items it gains or had move. The hash is a fixed function of the
 * strings, the same on every machine and every version (changing it moves every host).
 */

/** 32-bit FNV-1a of a string's UTF-16 code units. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** murmur3's 32-bit finalizer: spreads a combined hash over all bits. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A live node as the hash sees it: its id and the id's hash, computed once. */
export interface Candidate {
  readonly id: string;
  readonly seed: number;
}

export function candidate(id: string): Candidate {
  return { id, seed: fnv1a(id) };
}

/**
 * The id of the node that owns an item (a host directory, or a URL key in --partition url)
 * among `nodes`: the one with the highest score for the item; ties go to the smaller id.
 * Returns undefined for an empty list.
 */
export function ownerOf(item: string, nodes: readonly Candidate[]): string | undefined {
  const h = fnv1a(item);
  let best: Candidate | undefined;
  let bestScore = -1;
  for (const n of nodes) {
    const score = mix(h ^ Math.imul(n.seed, 0x9e3779b1));
    if (score > bestScore || (score === bestScore && best !== undefined && n.id < best.id)) {
      best = n;
      bestScore = score;
    }
  }
  return best?.id;
}
