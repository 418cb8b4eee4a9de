import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatLine, snapshotOf, totalOf, type Snapshot } from '../../../src/progress/snapshot.js';
import { CrawlStats } from '../../../src/progress/stats.js';

function snap(label: string, extra: Partial<Snapshot> = {}): Snapshot {
  return {
    label,
    pages: 10,
    queued: 5,
    inFlight: 2,
    errors: 1,
    rate: 1.25,
    round: 3,
    hostsOwned: 4,
    nodesAlive: 2,
    state: 'crawling',
    ...extra,
  };
}

describe('snapshotOf', () => {
  test("copies a node's counters, the rate rounded to one decimal", () => {
    let t = 0;
    const stats = new CrawlStats(() => t);
    stats.pages = 10;
    stats.queued = 7;
    stats.inFlight = 3;
    stats.round = 2;
    stats.hostsOwned = 5;
    stats.nodesAlive = 4;
    stats.state = 'idle';
    stats.countError('HTTP_404', true);
    stats.countError('HTTP_503', false);
    stats.countError('ROBOTS_DISALLOWED', true); // an exclusion, not an error
    t = 3_000;
    assert.deepEqual(snapshotOf('ws1-100', stats), {
      label: 'ws1-100',
      pages: 10,
      queued: 7,
      inFlight: 3,
      errors: 2,
      rate: 3.3,
      round: 2,
      hostsOwned: 5,
      nodesAlive: 4,
      state: 'idle',
    });
  });
});

describe('totalOf', () => {
  test('sums counts and rates, takes the highest round and node count', () => {
    const total = totalOf('total', [snap('a'), snap('b', { pages: 5, rate: 2.14, round: 7, nodesAlive: 3 })]);
    assert.deepEqual(total, {
      label: 'total',
      pages: 15,
      queued: 10,
      inFlight: 4,
      errors: 2,
      rate: 3.4,
      round: 7,
      hostsOwned: 8,
      nodesAlive: 3,
      state: 'crawling',
    });
  });

  test("one state when all agree, 'mixed' otherwise; nothing at all is zero", () => {
    assert.equal(totalOf('t', [snap('a', { state: 'idle' }), snap('b', { state: 'crawling' })]).state, 'mixed');
    assert.equal(totalOf('t', [snap('a', { state: 'idle' }), snap('b', { state: 'idle' })]).state, 'idle');
    assert.deepEqual(totalOf('t', []), {
      label: 't',
      pages: 0,
      queued: 0,
      inFlight: 0,
      errors: 0,
      rate: 0,
      round: 0,
      hostsOwned: 0,
      nodesAlive: 0,
      state: 'starting',
    });
  });
});

describe('formatLine', () => {
  test('one plain line with every field', () => {
    assert.equal(
      formatLine(snap('ws1-100')),
      'ws1-100: 10 pages, 5 queued, 2 in flight, 1 error, 1.25/s, round 3, 4 hosts, 2 nodes, crawling',
    );
  });

  test('one of a thing is singular', () => {
    assert.equal(
      formatLine(snap('n', { pages: 1, errors: 0, hostsOwned: 1, nodesAlive: 1 })),
      'n: 1 page, 5 queued, 2 in flight, 0 errors, 1.25/s, round 3, 1 host, 1 node, crawling',
    );
  });

  test('before any node reported: no hosts or nodes, and no separator left dangling', () => {
    assert.equal(formatLine(totalOf('total', [])), 'total: 0 pages, 0 queued, 0 in flight, 0 errors, 0/s, round 0, starting');
    assert.equal(formatLine(snap('n', { nodesAlive: 0, state: '' })), 'n: 10 pages, 5 queued, 2 in flight, 1 error, 1.25/s, round 3');
  });
});
