/**
 * The links one reseed scan has already offered, so that each distinct URL is offered (and
 * hashed with SHA-224 by the node's frontier) once per scan rather than once per record that
 * mentions it (13 times on average in the reseed bench, docs/benchmarks-log.md, "Reseeds").
 *
 * A URL is held as a 64-bit fingerprint (two independent 32-bit hashes of its UTF-16 code
 * units, computed in JavaScript: about a tenth of a SHA-224) with the lowest depth it was
 * offered at, in one open-addressing typed array: 9 bytes a URL, nothing for the garbage
 * collector to trace, dropped after the scan. Two distinct URLs with one fingerprint would
 * make the second look offered already; among the 3 million distinct URLs of a million
 * records the odds of any such pair are about 1 in 4 million per scan (n^2 / 2^65), the same
 * order as the done keys' fingerprints (docs/protocol.md).
 */
export class LinkMemo {
  /** Two 32-bit words per slot; a slot with depth 0 is empty. */
  #words: Int32Array;
  /** Depth + 1 of each slot (0: empty). Depths above 254 are kept as 254. */
  #depths: Uint8Array;
  #size = 0;

  constructor(capacity = 1 << 16) {
    this.#words = new Int32Array(capacity * 2);
    this.#depths = new Uint8Array(capacity);
  }

  /** Distinct URLs remembered. */
  get size(): number {
    return this.#size;
  }

  /**
   * True when `url` should be offered at `depth`: not offered before in this scan, or only at
   * a greater depth (a shallower path may pass a depth limit the deeper one did not).
   * Remembers it at the lower of the two depths.
   */
  first(url: string, depth: number): boolean {
    let a = 0x811c9dc5 ^ url.length;
    let b = 0x2f6b1d3b;
    for (let i = 0; i < url.length; i++) {
      const c = url.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
    a = fmix(a);
    b = fmix(b ^ Math.imul(a, 0x27d4eb2f));
    const d = Math.min(depth, 253) + 1;
    const mask = this.#depths.length - 1;
    let slot = a & mask;
    for (;;) {
      const have = this.#depths[slot]!;
      if (have === 0) {
        this.#words[slot * 2] = a;
        this.#words[slot * 2 + 1] = b;
        this.#depths[slot] = d;
        if (++this.#size * 2 > this.#depths.length) this.#grow();
        return true;
      }
      if (this.#words[slot * 2] === a && this.#words[slot * 2 + 1] === b) {
        if (d >= have) return false;
        this.#depths[slot] = d;
        return true;
      }
      slot = (slot + 1) & mask;
    }
  }

  #grow(): void {
    const words = this.#words;
    const depths = this.#depths;
    this.#words = new Int32Array(words.length * 2);
    this.#depths = new Uint8Array(depths.length * 2);
    const mask = this.#depths.length - 1;
    for (let i = 0; i < depths.length; i++) {
      if (depths[i] === 0) continue;
      let slot = words[i * 2]! & mask;
      while (this.#depths[slot] !== 0) slot = (slot + 1) & mask;
      this.#words[slot * 2] = words[i * 2]!;
      this.#words[slot * 2 + 1] = words[i * 2 + 1]!;
      this.#depths[slot] = depths[i]!;
    }
  }
}

/** murmur3's finalizer: every input bit affects every output bit. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
