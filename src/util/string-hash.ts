/**
 * A 32-bit hash of a string's UTF-16 code units (multiply-xorshift, a different function for
 * each `seed`): two of them, of different seeds, make a 64-bit fingerprint (KeySet
 * addFingerprint) for counting distinct strings where a SHA-224 key (urlKey) would cost
 * several times more and nothing is stored under the result. Two of n strings share such a
 * fingerprint by chance with probability about n^2 / 2^65.
 */
export function hashString(s: string, seed: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ s.length;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x5bd1e995);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return (h ^ (h >>> 15)) >>> 0;
}
