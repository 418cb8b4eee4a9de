import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { candidate, fnv1a, ownerOf, type Candidate } from '../../../src/cluster/rendezvous.js';

const ids = (...names: string[]): Candidate[] => names.map(candidate);
const THREE = ids('alpha-1', 'beta-2', 'gamma-3');
const FOUR = [...THREE, candidate('delta-4')];

/** Items of a crawl: host directories (the default) or URL keys (--partition url). */
const items = (n: number): string[] => Array.from({ length: n }, (_, i) => `host${i}.example.com`);

describe('fnv1a', () => {
  test('standard 32-bit FNV-1a test vectors', () => {
    assert.equal(fnv1a(''), 0x811c9dc5);
    assert.equal(fnv1a('a'), 0xe40c292c);
    assert.equal(fnv1a('foobar'), 0xbf9cf968);
  });

  test('an unsigned 32-bit number', () => {
    for (const s of ['x', 'example.com', 'ü']) {
      const h = fnv1a(s);
      assert.ok(Number.isInteger(h) && h >= 0 && h < 2 ** 32, s);
    }
  });
});

describe('ownerOf: determinism', () => {
  // The owner is part of how nodes of different versions agree: these must never change.
  // Recorded from the implementation after checking that ownership spreads evenly (below).
  const VECTORS: readonly (readonly [string, string, string])[] = [
    // item, owner among alpha-1/beta-2/gamma-3, owner once delta-4 joins
    ['example.com', 'gamma-3', 'gamma-3'],
    ['example.org', 'alpha-1', 'delta-4'],
    ['www.wikipedia.org', 'beta-2', 'beta-2'],
    ['xn--mnchen-3ya.de', 'alpha-1', 'alpha-1'],
    ['127.0.0.2_8080', 'beta-2', 'beta-2'],
    ['[--1]_8080', 'beta-2', 'beta-2'],
    ['a', 'beta-2', 'beta-2'],
    ['599370d5687c3fd078c314add6d37c2d714e57a5d9157d4a703cfcc0', 'gamma-3', 'gamma-3'],
  ];
  for (const [item, owner3, owner4] of VECTORS) {
    test(`${item} -> ${owner3}, then ${owner4}`, () => {
      assert.equal(ownerOf(item, THREE), owner3);
      assert.equal(ownerOf(item, FOUR), owner4);
    });
  }

  test('the order in which nodes are listed does not matter', () => {
    const shuffled = [FOUR[2]!, FOUR[0]!, FOUR[3]!, FOUR[1]!];
    for (const item of items(500)) assert.equal(ownerOf(item, shuffled), ownerOf(item, FOUR), item);
  });

  test('one node owns everything; no node owns nothing', () => {
    assert.equal(ownerOf('example.com', ids('solo')), 'solo');
    assert.equal(ownerOf('example.com', []), undefined);
  });

  test('candidate() carries the hash of the id', () => {
    assert.deepEqual(candidate('alpha-1'), { id: 'alpha-1', seed: fnv1a('alpha-1') });
  });
});

describe('ownerOf: spread', () => {
  test('3 nodes x 3000 items: each node owns 25% to 42%', () => {
    const counts = new Map<string, number>();
    for (const item of items(3000)) {
      const o = ownerOf(item, THREE)!;
      counts.set(o, (counts.get(o) ?? 0) + 1);
    }
    assert.equal(counts.size, 3);
    for (const [id, n] of counts) assert.ok(n >= 750 && n <= 1260, `${id} owns ${n} of 3000`);
  });

  test('the spread holds for node ids that differ only in the pid (the default ids)', () => {
    const nodes = ids('ws1-1234', 'ws1-1235', 'ws2-1234');
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const o = ownerOf(`127.0.0.${i % 250}_${8000 + i}`, nodes)!;
      counts.set(o, (counts.get(o) ?? 0) + 1);
    }
    assert.equal(counts.size, 3);
    for (const [id, n] of counts) assert.ok(n >= 750 && n <= 1260, `${id} owns ${n} of 3000`);
  });
});

describe('ownerOf: minimal movement', () => {
  test('when a 4th node joins, only items that go to the new node move', () => {
    let moved = 0;
    for (const item of items(3000)) {
      const before = ownerOf(item, THREE);
      const after = ownerOf(item, FOUR);
      if (after !== before) {
        assert.equal(after, 'delta-4', item);
        moved++;
      }
    }
    // About a quarter moves; none at all would mean the new node gets nothing.
    assert.ok(moved >= 500 && moved <= 1000, `${moved} of 3000 moved`);
  });

  test('when a node leaves, only its items move, spread over the others', () => {
    const remaining = THREE.filter((n) => n.id !== 'beta-2');
    const gainers = new Set<string>();
    for (const item of items(3000)) {
      const before = ownerOf(item, THREE)!;
      const after = ownerOf(item, remaining)!;
      if (before === 'beta-2') gainers.add(after);
      else assert.equal(after, before, item);
    }
    assert.deepEqual([...gainers].sort(), ['alpha-1', 'gamma-3']);
  });
});
