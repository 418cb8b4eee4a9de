import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KeySet } from '../../../src/url/key-set.js';
import { urlKey } from '../../../src/url/key.js';

/** A valid key whose first 64 bits are `hi`, `lo` (16 hex digits) and the rest `tail`. */
function keyOf(hi: number, lo: number, tail = 'a'): string {
  const hex = (n: number): string => n.toString(16).padStart(8, '0');
  return hex(hi) + hex(lo) + tail.repeat(40);
}

/** A valid key whose first 128 bits are the four words `w` and the rest `f`. */
function key128(...w: number[]): string {
  return w.map((n) => n.toString(16).padStart(8, '0')).join('') + 'f'.repeat(24);
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

  test('uppercase hex reads as lowercase; keys that share 64 bits are told apart by the next 64', () => {
    const set = new KeySet();
    set.add(keyOf(0xdeadbeef, 0xfeedf00d));
    assert.equal(set.has(keyOf(0xdeadbeef, 0xfeedf00d).toUpperCase()), true);
    // A 64-bit fingerprint took these two for one key; the 128-bit one does not.
    assert.equal(set.has(keyOf(0xdeadbeef, 0xfeedf00d, 'b')), false);
    assert.equal(set.add(keyOf(0xdeadbeef, 0xfeedf00d, 'b')), true);
    assert.equal(set.size, 2);
    assert.equal(set.has(keyOf(0xdeadbeef, 0xfeedf00e)), false);
    // Documented: the fingerprint is the first 32 hex digits (collision odds in KeySet's doc).
    set.add(key128(1, 2, 3, 4));
    assert.equal(set.has(key128(1, 2, 3, 4).slice(0, 32) + '0'.repeat(24)), true);
    assert.equal(set.has(key128(1, 2, 3, 5)), false);
    assert.equal(set.has(key128(1, 2, 4, 4)), false);
  });

  test('delete keeps every other key of a probe run findable, through growth', () => {
    const set = new KeySet();
    // One first slot (the second word) for all: a long run that wraps the table's end.
    const run = Array.from({ length: 11 }, (_, i) => key128(i + 1, 0xfffffff, i, 7));
    for (const k of run) assert.equal(set.add(k), true);
    for (const i of [0, 5, 10]) assert.equal(set.delete(run[i]!), true);
    assert.equal(set.delete(run[0]!), false, 'deleted twice');
    assert.equal(set.size, 8);
    for (const [i, k] of run.entries()) assert.equal(set.has(k), ![0, 5, 10].includes(i), `key ${i}`);

    const keys = Array.from({ length: 40_000 }, (_, i) => urlKey(`http://example.com/${i}`));
    for (const k of keys) set.add(k);
    for (let i = 0; i < keys.length; i += 3) assert.equal(set.delete(keys[i]!), true);
    for (const [i, k] of keys.entries()) assert.equal(set.has(k), i % 3 !== 0, `key ${i}`);
    assert.equal(set.size, 8 + keys.length - Math.ceil(keys.length / 3));
    // Added again after a delete.
    assert.equal(set.add(keys[0]!), true);
    assert.equal(set.has(keys[0]!), true);
  });

  test('the all-zero fingerprint is deleted like any key', () => {
    const set = new KeySet();
    const zero = key128(0, 0, 0, 0);
    set.add(zero);
    assert.equal(set.delete(zero), true);
    assert.equal(set.has(zero), false);
    assert.equal(set.size, 0);
  });

  test('a set of 64 bits keeps the first 64: keys that share them are one; adds, finds and deletes through growth', () => {
    const set = new KeySet(64);
    assert.equal(set.add(keyOf(0xdeadbeef, 0xfeedf00d)), true);
    assert.equal(set.has(keyOf(0xdeadbeef, 0xfeedf00d, 'b')), true, 'the same first 64 bits');
    assert.equal(set.add(keyOf(0xdeadbeef, 0xfeedf00d, 'b')), false);
    assert.equal(set.has(keyOf(0xdeadbeef, 0xfeedf00e)), false);
    assert.equal(set.add(keyOf(0, 0)), true, 'the zero fingerprint, kept aside');
    assert.equal(set.has(keyOf(0, 0, 'c')), true);
    const keys = Array.from({ length: 20_000 }, (_, i) => urlKey(`http://example.com/${i}`));
    for (const k of keys) assert.equal(set.add(k), true);
    assert.equal(set.size, 20_002);
    for (const [i, k] of keys.entries()) if (i % 3 === 0) assert.equal(set.delete(k), true);
    for (const [i, k] of keys.entries()) assert.equal(set.has(k), i % 3 !== 0, `key ${i}`);
    assert.equal(set.delete(keyOf(0, 0)), true);
    assert.equal(set.has(keyOf(0, 0)), false);
  });
});
