/** Slots of a new set; a power of two. */
const INITIAL_SLOTS = 16;

/**
 * A set of keys (lowercase hex SHA-224, as `urlKey` makes them) held as their first 128 bits
 * in one typed array: 21 to 43 bytes per key (16 a slot, a table between 3/8 and 3/4 full)
 * instead of about 100 for a `Set` of 56-character strings, and nothing for the garbage
 * collector to trace. A node keeps one per host for the URLs it has done and one of 64 bits
 * (below) for the URLs of its queue that wait in a spill file (src/frontier/spill-file.ts),
 * and the reseeder one per directory for the records it has read.
 *
 * Two keys with the same first 128 bits count as one. A done key that stood for another one
 * would make that URL look done and never fetched, so the fingerprint is long enough for this
 * never to happen: for SHA-224 outputs the odds are about n^2 / 2^129, 1.5e-25 for ten
 * million keys in one set (docs/protocol.md, "Memory"). With 64 bits, as before, they were
 * n^2 / 2^65: 3e-8 for a million keys in one host, 3e-6 for ten million.
 *
 * Keys must be valid keys (callers check file names with `isKey`); the bits come from the
 * first 32 hex digits.
 *
 * A set made with `bits` 64 keeps the first 64 bits (8 bytes a slot): for the keys of URLs
 * waiting in a spill file, where two keys taken for one only leave the second for a later
 * offer or the next full reseed, as LinkMemo's do (docs/protocol.md, "Memory").
 */
export class KeySet {
  /** 32-bit words of a fingerprint: 4 (128 bits of the key) or 2 (64). */
  readonly #w: 2 | 4;
  /** Open addressing with linear probing: slot i is words wi to wi + w - 1; all zero is empty. */
  #table: Int32Array;
  #mask = INITIAL_SLOTS - 1;
  #size = 0;
  /** The one key whose fingerprint is all zero (the empty slot's value) is kept aside. */
  #hasZero = false;
  /** The fingerprint of the last key parsed (`#parse`): no allocation per call. */
  readonly #fp = new Int32Array(4);

  /** `bits`: of the key kept (see above); 128 unless said. */
  constructor(bits: 64 | 128 = 128) {
    this.#w = bits === 64 ? 2 : 4;
    this.#table = new Int32Array(INITIAL_SLOTS * this.#w);
  }

  get size(): number {
    return this.#size;
  }

  has(key: string): boolean {
    if (this.#parse(key)) return this.#hasZero;
    return !this.#isEmpty(this.#slot());
  }

  /** Adds a key; true when it was not there yet. */
  add(key: string): boolean {
    return this.#addParsed(this.#parse(key));
  }

  /**
   * Adds a 64-bit fingerprint given as two 32-bit halves (src/util/string-hash.ts: counting
   * distinct strings without a SHA-224 each); true when it was not there yet. Not to be mixed
   * with keys in one set.
   */
  addFingerprint(hi: number, lo: number): boolean {
    const fp = this.#fp;
    fp[0] = hi;
    fp[1] = lo;
    fp[2] = 0;
    fp[3] = 0;
    return this.#addParsed(fp[0] === 0 && fp[1] === 0);
  }

  /** Adds the fingerprint in `#fp` (`zero`: it is all zero). */
  #addParsed(zero: boolean): boolean {
    if (zero) {
      if (this.#hasZero) return false;
      this.#hasZero = true;
      this.#size++;
      return true;
    }
    const i = this.#slot();
    if (!this.#isEmpty(i)) return false;
    this.#table.set(this.#w === 4 ? this.#fp : this.#fp.subarray(0, 2), i * this.#w);
    this.#size++;
    // Grow at 3/4 full: probes stay short (about 2.5 on a hit, 8.5 on a miss at the worst).
    if (4 * this.#size > 3 * (this.#mask + 1)) this.#grow();
    return true;
  }

  /** Removes a key; true when it was there. */
  delete(key: string): boolean {
    if (this.#parse(key)) {
      if (!this.#hasZero) return false;
      this.#hasZero = false;
      this.#size--;
      return true;
    }
    let hole = this.#slot();
    if (this.#isEmpty(hole)) return false;
    this.#size--;
    // Backward shift: move later entries of the run into the hole when their first slot is
    // not between the hole and them, so that no probe stops early at the emptied slot.
    const t = this.#table;
    const mask = this.#mask;
    const w = this.#w;
    for (let j = (hole + 1) & mask; !this.#isEmpty(j); j = (j + 1) & mask) {
      const home = t[j * w + 1]! & mask;
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        t.copyWithin(hole * w, j * w, j * w + w);
        hole = j;
      }
    }
    t.fill(0, hole * w, hole * w + w);
    return true;
  }

  /** Parses the key's fingerprint into `#fp`; true when it is all zero. */
  #parse(key: string): boolean {
    const fp = this.#fp;
    for (let w = 0; w < this.#w; w++) fp[w] = hex32(key, 8 * w);
    return fp[0] === 0 && fp[1] === 0 && (this.#w === 2 || (fp[2] === 0 && fp[3] === 0));
  }

  #isEmpty(i: number): boolean {
    const t = this.#table;
    const at = i * this.#w;
    return t[at] === 0 && t[at + 1] === 0 && (this.#w === 2 || (t[at + 2] === 0 && t[at + 3] === 0));
  }

  /** The slot that holds `#fp`, or the empty slot where it would go. */
  #slot(): number {
    const t = this.#table;
    const fp = this.#fp;
    const a = fp[0]!;
    const b = fp[1]!;
    const c = fp[2]!;
    const d = fp[3]!;
    if (this.#w === 2) {
      for (let i = b & this.#mask; ; i = (i + 1) & this.#mask) {
        const w0 = t[2 * i]!;
        const w1 = t[2 * i + 1]!;
        if ((w0 === a && w1 === b) || (w0 === 0 && w1 === 0)) return i;
      }
    }
    for (let i = b & this.#mask; ; i = (i + 1) & this.#mask) {
      const at = i * 4;
      const w0 = t[at]!;
      const w1 = t[at + 1]!;
      if (w0 === a && w1 === b && t[at + 2] === c && t[at + 3] === d) return i;
      if (w0 === 0 && w1 === 0 && t[at + 2] === 0 && t[at + 3] === 0) return i;
    }
  }

  #grow(): void {
    const old = this.#table;
    const w = this.#w;
    this.#table = new Int32Array(old.length * 2);
    this.#mask = this.#table.length / w - 1;
    const fp = this.#fp;
    for (let at = 0; at < old.length; at += w) {
      if (old[at] === 0 && old[at + 1] === 0 && (w === 2 || (old[at + 2] === 0 && old[at + 3] === 0))) continue;
      for (let k = 0; k < w; k++) fp[k] = old[at + k]!;
      this.#table.set(old.subarray(at, at + w), this.#slot() * w);
    }
  }
}

/** The 32 bits of 8 hex digits of `s` from `at` (lowercase or uppercase), as a signed number. */
function hex32(s: string, at: number): number {
  let v = 0;
  for (let i = at; i < at + 8; i++) {
    const c = s.charCodeAt(i);
    // '0'-'9' -> 0-9; 'a'-'f' and 'A'-'F' -> 10-15 (c | 32 lowercases a letter).
    v = (v << 4) | (c <= 57 ? c - 48 : (c | 32) - 87);
  }
  return v | 0;
}
