import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  chooseLends,
  demand,
  evenBalance,
  idleShare,
  lendingShare,
  MIN_LEND_QUEUE,
  shareOfRoom,
  spareSlots,
} from '../../../src/crawl/host-lending.js';

const Q = MIN_LEND_QUEUE;

describe('host lending: what a node says and what it lends', () => {
  test('demand counts each host up to --per-host; spare is what --concurrency leaves', () => {
    const hosts = [
      { dir: 'a', queued: 10, inFlight: 1 },
      { dir: 'b', queued: 0, inFlight: 1 },
      { dir: 'c', queued: 0, inFlight: 0 },
    ];
    assert.equal(demand(hosts, 2), 3);
    assert.equal(demand(hosts, 1), 2);
    assert.equal(spareSlots(4, 3), 1);
    assert.equal(spareSlots(4, 9), 0);
  });

  test('no surplus, no lend; no peer with room, no lend', () => {
    const hosts = [{ dir: 'a', queued: 50 }];
    assert.deepEqual(chooseLends({ surplus: 0, perHost: 1, hosts, peers: [{ id: 'p', room: 4 }], most: 8 }), []);
    assert.deepEqual(chooseLends({ surplus: 3, perHost: 1, hosts, peers: [{ id: 'p', room: 0 }], most: 8 }), []);
  });

  test('the longest queues go first, to the peer with the most room, until the surplus is gone', () => {
    const hosts = [
      { dir: 'short', queued: Q },
      { dir: 'long', queued: 40 },
      { dir: 'mid', queued: 20 },
    ];
    const peers = [
      { id: 'p1', room: 1 },
      { id: 'p2', room: 3 },
    ];
    assert.deepEqual(chooseLends({ surplus: 2, perHost: 1, hosts, peers, most: 8 }), [
      { host: 'long', borrower: 'p2' },
      { host: 'mid', borrower: 'p2' },
    ]);
  });

  test('a lend takes --per-host slots from the surplus and from the borrower', () => {
    const hosts = [
      { dir: 'a', queued: 30 },
      { dir: 'b', queued: 20 },
      { dir: 'c', queued: 10 },
    ];
    const lends = chooseLends({ surplus: 10, perHost: 2, hosts, peers: [{ id: 'p', room: 4 }], most: 8 });
    assert.deepEqual(lends, [
      { host: 'a', borrower: 'p' },
      { host: 'b', borrower: 'p' },
    ]);
  });

  test('short queues stay, and at most `most` hosts go at once', () => {
    const hosts = [
      { dir: 'a', queued: Q - 1 },
      { dir: 'b', queued: 1 },
    ];
    assert.deepEqual(chooseLends({ surplus: 5, perHost: 1, hosts, peers: [{ id: 'p', room: 8 }], most: 8 }), []);
    const many = Array.from({ length: 10 }, (_, i) => ({ dir: `h${i}`, queued: 100 - i }));
    assert.equal(chooseLends({ surplus: 20, perHost: 1, hosts: many, peers: [{ id: 'p', room: 20 }], most: 3 }).length, 3);
  });
});

describe('host lending: whose room, and lending by balance', () => {
  test('several lenders share one idle node: each takes its part, the most wanting first', () => {
    const lenders = [
      { id: 'a', slots: 3 },
      { id: 'b', slots: 5 },
    ];
    const borrowers = [{ id: 'idle', slots: 4 }];
    assert.deepEqual(shareOfRoom('b', lenders, borrowers), [{ id: 'idle', room: 4 }]);
    assert.deepEqual(shareOfRoom('a', lenders, borrowers), []);
    const two = [...borrowers, { id: 'other', slots: 2 }];
    assert.deepEqual(shareOfRoom('a', lenders, two), [{ id: 'other', room: 1 }]);
  });

  test('the even balance is the mean, rounded down, and never below 0', () => {
    assert.equal(evenBalance([8, 6, 4, 2]), 5);
    assert.equal(evenBalance([3, 2]), 2);
    assert.equal(evenBalance([5, -4, -4]), 0);
    assert.equal(evenBalance([]), 0);
  });

  test('with slots to spare in the cluster, a node lends what it wants beyond --concurrency to free slots', () => {
    const nodes = [
      { id: 'busy', balance: 3, canBorrow: false },
      { id: 'idle', balance: -4, canBorrow: true },
    ];
    assert.deepEqual(lendingShare('busy', nodes), { surplus: 3, peers: [{ id: 'idle', room: 3 }] });
  });

  test('with every slot taken, hosts move from a node with many waiting to one with few, down to the even balance', () => {
    const nodes = [
      { id: 'n1', balance: 8, canBorrow: true },
      { id: 'n2', balance: 6, canBorrow: true },
      { id: 'n3', balance: 4, canBorrow: true },
      { id: 'n4', balance: 2, canBorrow: true },
    ];
    assert.deepEqual(lendingShare('n1', nodes), { surplus: 3, peers: [{ id: 'n4', room: 3 }] });
    assert.deepEqual(lendingShare('n2', nodes), { surplus: 1, peers: [{ id: 'n3', room: 1 }] });
    assert.deepEqual(lendingShare('n3', nodes), { surplus: 0, peers: [] });
    assert.deepEqual(lendingShare('n4', nodes), { surplus: 0, peers: [] });
  });

  test('a difference of one slot moves nothing, and a node that may not borrow now gets nothing', () => {
    const close = [
      { id: 'a', balance: 5, canBorrow: true },
      { id: 'b', balance: 4, canBorrow: true },
    ];
    assert.deepEqual(lendingShare('a', close), { surplus: 1, peers: [] });
    const waiting = [
      { id: 'a', balance: 9, canBorrow: true },
      { id: 'b', balance: 1, canBorrow: false },
    ];
    assert.deepEqual(lendingShare('a', waiting), { surplus: 4, peers: [] });
  });

  test("no host waits for a slot: each idle peer goes to one node whose hosts want two hosts' slots, the most wanting first", () => {
    const lenders = [
      { id: 'a', slots: 3 },
      { id: 'b', slots: 4 },
      { id: 'c', slots: 1 }, // one host with work: it keeps it
    ];
    const idle = ['z', 'x', 'y'];
    const share = (self: string) => idleShare(self, lenders, idle, 1).map((p) => p.id);
    assert.deepEqual(share('b'), ['x', 'z']);
    assert.deepEqual(share('a'), ['y']);
    assert.deepEqual(share('c'), []);
    // Every idle peer is some one node's, whichever node computes it.
    assert.deepEqual([...share('a'), ...share('b'), ...share('c')].sort(), ['x', 'y', 'z']);
    // With --per-host 2 a node needs four slots wanted (two hosts); each idle peer gets --per-host slots.
    assert.deepEqual(idleShare('b', lenders, idle, 2), [
      { id: 'x', room: 2 },
      { id: 'y', room: 2 },
      { id: 'z', room: 2 },
    ]);
    assert.deepEqual(idleShare('a', lenders, idle, 2), []);
    assert.deepEqual(idleShare('a', lenders, [], 1), []);
  });

  test('shortestFirst lends the shortest queue worth a move first', () => {
    const hosts = [
      { dir: 'long', queued: 40 },
      { dir: 'tiny', queued: Q - 1 },
      { dir: 'short', queued: Q },
    ];
    const peers = [{ id: 'p', room: 1 }];
    assert.deepEqual(chooseLends({ surplus: 1, perHost: 1, hosts, peers, most: 1, shortestFirst: true }), [
      { host: 'short', borrower: 'p' },
    ]);
    assert.deepEqual(chooseLends({ surplus: 1, perHost: 1, hosts, peers, most: 1 }), [{ host: 'long', borrower: 'p' }]);
  });
});
