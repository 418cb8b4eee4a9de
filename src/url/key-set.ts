/** Slots (pairs of 32-bit words) of a new set; a power of two. */
const INITIAL_SLOTS = 16;

/**
 * A set of keys (lowercase hex SHA-224, as `urlKey` makes them) held as their first 64 bits in
 * one typed array: about 16 bytes per key instead of about 100 for a `Set` of 56-character
 * strings, and nothing for the garbage collector to trace. A node keeps one per host for the
 * URLs it has done, and the reseeder one per directory for the records it has read, so a node
 * that knows millions of URLs stays within a few hundred MB.
 *
 * Two keys with the same first 64 bits count as one. For SHA-224 outputs that happens by
 * chance with probability about n^2 / 2^65: about 3e-8 for a million keys in one set (the
 * same trade Heritrix makes with its 64-bit URI fingerprints). Only `has` and `add` exist:
 * done is done.
 *
 * Keys must be valid keys (callers check file names with `isKey`); the bits come from the
 * first 16 hex digits.
 */
export class KeySet {
  /** Open addressing with linear probing: slot i is words 2i (high) and 2i + 1 (low); 0,0 is empty. */
  #table = new Uint32Array(INITIAL_SLOTS * 2);
  #mask = INITIAL_SLOTS - 1;
  #size = 0;
  /** The one key whose fingerprint is 0,0 (the empty slot's value) is kept aside. */
  #hasZero = false;

  get size(): number {
    return this.#size;
  }

  has(key: string): boolean {
    const hi = hex32(key, 0);
    const lo = hex32(key, 8);
    if (hi === 0 && lo === 0) return this.#hasZero;
    const i = this.#slot(hi, lo);
    return this.#table[2 * i] !== 0 || this.#table[2 * i + 1] !== 0;
  }

  /** Adds a key; true when it was not there yet. */
  add(key: string): boolean {
    return this.addFingerprint(hex32(key, 0), hex32(key, 8));
  }

  /** Adds a 64-bit fingerprint given as two unsigned 32-bit halves (as `add` takes them from a key); true when it was not there yet. */
  addFingerprint(hi: number, lo: number): boolean {
    if (hi === 0 && lo === 0) {
      if (this.#hasZero) return false;
      this.#hasZero = true;
      this.#size++;
      return true;
    }
    if (!this.#insert(hi, lo)) return false;
    this.#size++;
    // Grow at half full: probes stay short (about 1.5 on a hit, 2.5 on a miss).
    if (2 * this.#size > this.#mask + 1) this.#grow();
    return true;
  }

  /** Writes a fingerprint into its slot; false when it was there already. */
  #insert(hi: number, lo: number): boolean {
    const i = this.#slot(hi, lo);
    if (this.#table[2 * i] !== 0 || this.#table[2 * i + 1] !== 0) return false;
    this.#table[2 * i] = hi;
    this.#table[2 * i + 1] = lo;
    return true;
  }

  /** The slot that holds this fingerprint, or the empty slot where it would go. */
  #slot(hi: number, lo: number): number {
    const t = this.#table;
    for (let i = lo & this.#mask; ; i = (i + 1) & this.#mask) {
      const h = t[2 * i]!;
      const l = t[2 * i + 1]!;
      if ((h === hi && l === lo) || (h === 0 && l === 0)) return i;
    }
  }

  #grow(): void {
    const old = this.#table;
    this.#table = new Uint32Array(old.length * 2);
    this.#mask = old.length - 1; // old.length / 2 slots before, twice that now
    for (let i = 0; i < old.length; i += 2) {
      const hi = old[i]!;
      const lo = old[i + 1]!;
      if (hi !== 0 || lo !== 0) this.#insert(hi, lo);
    }
  }
}

/** The 32-bit number of 8 hex digits of `s` from `at` (lowercase or uppercase). */
function hex32(s: string, at: number): number {
  let v = 0;
  for (let i = at; i < at + 8; i++) {
    const c = s.charCodeAt(i);
    // '0'-'9' -> 0-9; 'a'-'f' and 'A'-'F' -> 10-15 (c | 32 lowercases a letter).
    v = (v << 4) | (c <= 57 ? c - 48 : (c | 32) - 87);
  }
  return v >>> 0;
}
