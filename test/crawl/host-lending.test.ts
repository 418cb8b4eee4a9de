import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chooseLends, demand, MIN_LEND_QUEUE, spareSlots } from '../../src/crawl/host-lending.js';

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

  test('no surplus, no lend; no peer with spare slots, no lend', () => {
    const hosts = [{ dir: 'a', queued: 50 }];
    assert.deepEqual(chooseLends({ surplus: 0, perHost: 1, hosts, peers: [{ id: 'p', spare: 4 }], most: 8 }), []);
    assert.deepEqual(chooseLends({ surplus: 3, perHost: 1, hosts, peers: [{ id: 'p', spare: 0 }], most: 8 }), []);
  });

  test('the longest queues go first, to the peer with the most spare slots, until the surplus is gone', () => {
    const hosts = [
      { dir: 'short', queued: Q },
      { dir: 'long', queued: 40 },
      { dir: 'mid', queued: 20 },
    ];
    const peers = [
      { id: 'p1', spare: 1 },
      { id: 'p2', spare: 3 },
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
    const lends = chooseLends({ surplus: 10, perHost: 2, hosts, peers: [{ id: 'p', spare: 4 }], most: 8 });
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
    assert.deepEqual(chooseLends({ surplus: 5, perHost: 1, hosts, peers: [{ id: 'p', spare: 8 }], most: 8 }), []);
    const many = Array.from({ length: 10 }, (_, i) => ({ dir: `h${i}`, queued: 100 - i }));
    assert.equal(chooseLends({ surplus: 20, perHost: 1, hosts: many, peers: [{ id: 'p', spare: 20 }], most: 3 }).length, 3);
  });
});
