import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ring } from '../../../src/util/ring.js';

describe('Ring', () => {
  test('first in, first out; peek does not remove; empty gives undefined', () => {
    const r = new Ring<string>();
    assert.equal(r.length, 0);
    assert.equal(r.shift(), undefined);
    assert.equal(r.peek(), undefined);
    r.push('a');
    r.push('b');
    r.push('c');
    assert.equal(r.length, 3);
    assert.equal(r.peek(), 'a');
    assert.equal(r.shift(), 'a');
    assert.equal(r.peek(), 'b');
    assert.equal(r.length, 2);
    r.push('d');
    assert.deepEqual([r.shift(), r.shift(), r.shift()], ['b', 'c', 'd']);
    assert.equal(r.length, 0);
    assert.equal(r.shift(), undefined);
  });

  test('drain returns what is left, oldest first, and empties the ring', () => {
    const r = new Ring<number>();
    for (let i = 0; i < 5; i++) r.push(i);
    r.shift();
    r.shift();
    assert.deepEqual(r.drain(), [2, 3, 4]);
    assert.equal(r.length, 0);
    assert.deepEqual(r.drain(), []);
    r.push(9);
    assert.equal(r.shift(), 9);
  });

  test('order and length hold across compaction (long runs of push and shift)', () => {
    const r = new Ring<number>();
    let next = 0;
    let expected = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 700; i++) r.push(next++);
      for (let i = 0; i < 600; i++) assert.equal(r.shift(), expected++);
      assert.equal(r.length, next - expected);
      assert.equal(r.peek(), expected);
    }
    const rest = r.drain();
    assert.equal(rest.length, next - expected);
    assert.deepEqual(
      rest,
      Array.from({ length: next - expected }, (_, i) => expected + i),
    );
  });

  test('falsy items are items', () => {
    const r = new Ring<number | string>();
    r.push(0);
    r.push('');
    assert.equal(r.length, 2);
    assert.equal(r.shift(), 0);
    assert.equal(r.shift(), '');
    assert.equal(r.length, 0);
  });
});
