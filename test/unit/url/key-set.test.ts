import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KeySet } from '../../../src/url/key-set.js';
import { urlKey } from '../../../src/url/key.js';

/** A valid key whose first 64 bits are `hi`, `lo` (16 hex digits) and the rest `tail`. */
function keyOf(hi: number, lo: number, tail = 'a'): string {
  const hex = (n: number): string => n.toString(16).padStart(8, '0');
  return hex(hi) + hex(lo) + tail.repeat(40);
}

describe('KeySet', () => {
  test('holds what was added, and nothing else, through many growths', () => {
    const set = new KeySet();
    const keys = Array.from({ length: 50_000 }, (_, i) => urlKey(`http://example.com/${i}`));
    for (const [i, k] of keys.entries()) {
      if (i % 2 === 0) assert.equal(set.add(k), true);
    }
    assert.equal(set.size, 25_000);
    for (const [i, k] of keys.entries()) assert.equal(set.has(k), i % 2 === 0, `key ${i}`);
    assert.equal(set.add(keys[0]!), false, 'added twice');
    assert.equal(set.size, 25_000);
  });

  test('keys that start the same slot are kept apart (linear probing)', () => {
    const set = new KeySet();
    // Same low 32 bits: the same first slot whatever the table size.
    const keys = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((hi) => keyOf(hi, 0x1234));
    for (const k of keys) set.add(k);
    for (const k of keys) assert.equal(set.has(k), true);
    assert.equal(set.has(keyOf(10, 0x1234)), false);
    // Same high 32 bits, low ones equal below bit 20: also one first slot, told apart by the low word.
    const sameHigh = [0x1234, 0x101234, 0x201234].map((lo) => keyOf(0xabc, lo));
    for (const k of sameHigh.slice(0, 2)) assert.equal(set.add(k), true);
    assert.equal(set.has(sameHigh[0]!), true);
    assert.equal(set.has(sameHigh[1]!), true);
    assert.equal(set.has(sameHigh[2]!), false);
    assert.equal(set.size, 11);
  });

  test('the key whose first 64 bits are zero is a key like any other', () => {
    const set = new KeySet();
    const zero = keyOf(0, 0);
    assert.equal(set.has(zero), false);
    assert.equal(set.add(zero), true);
    assert.equal(set.add(zero), false);
    assert.equal(set.has(zero), true);
    assert.equal(set.has(keyOf(0, 1)), false);
    assert.equal(set.size, 1);
    // A fingerprint with a zero high word is stored in the table like any other.
    assert.equal(set.add(keyOf(0, 1)), true);
    assert.equal(set.has(keyOf(0, 1)), true);
    assert.equal(set.size, 2);
  });

  test('uppercase hex reads as lowercase; keys equal in their first 64 bits count as one', () => {
    const set = new KeySet();
    set.add(keyOf(0xdeadbeef, 0xfeedf00d));
    assert.equal(set.has(keyOf(0xdeadbeef, 0xfeedf00d).toUpperCase()), true);
    // Documented: the fingerprint is the first 16 hex digits (collision odds in KeySet's doc).
    assert.equal(set.has(keyOf(0xdeadbeef, 0xfeedf00d, 'b')), true);
    assert.equal(set.has(keyOf(0xdeadbeef, 0xfeedf00e)), false);
  });
});
