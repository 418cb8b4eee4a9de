import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatWatch, NodeWatch } from '../../../src/cli/status-watch.js';
import { remoteRecord } from '../../support/node-records.js';

describe('status --watch: the table of nodes', () => {
  test('pages/s is over the last minute of watching, by the watcher clock', () => {
    const watch = new NodeWatch();
    watch.look([remoteRecord('a', 1, { pages: 100, rate: 7 })], 0);
    // Under a second of watching: the node's own rate.
    assert.equal(watch.rows(500)[0]!.rate, 7);
    for (let t = 1; t <= 90; t++) watch.look([remoteRecord('a', 1 + t, { pages: 100 + 10 * t })], t * 1000);
    // Ten pages a second all along; the window keeps about a minute.
    assert.equal(watch.rows(90_000)[0]!.rate, 10);
  });

  test('a node whose counter stops for three of its heartbeats shows as silent; totals count the live ones', () => {
    const watch = new NodeWatch();
    watch.look([remoteRecord('a', 1, { pages: 5, hostsOwned: 2 }), remoteRecord('b', 1, { pages: 7, hostsOwned: 3, state: 'idle' })], 0);
    watch.look(
      [remoteRecord('a', 2, { pages: 5, hostsOwned: 2 }), remoteRecord('b', 1, { pages: 7, hostsOwned: 3, state: 'idle' })],
      4_000,
    );
    const rows = watch.rows(4_000);
    assert.deepEqual(
      rows.map((r) => [r.node, r.state, r.pages, r.hosts]),
      [
        ['a', 'crawling', 5, 2],
        ['b', 'silent 4s', 7, 3],
        ['total', '1 live', 12, 5],
      ],
    );
    // A record that is gone (the node left) leaves the table.
    watch.look([remoteRecord('a', 3)], 5_000);
    assert.deepEqual(
      watch.rows(5_000).map((r) => r.node),
      ['a', 'total'],
    );
  });

  test('the table: a header and aligned columns', () => {
    const watch = new NodeWatch();
    watch.look([remoteRecord('node-1', 1, { pages: 12, queued: 3, inFlight: 2, errors: 1, hostsOwned: 4 })], 0);
    const lines = formatWatch(watch.rows(0));
    assert.match(lines[0]!, /^node +state +pages\/s +pages +hosts +queued +in flight +errors$/);
    assert.match(lines[1]!, /^node-1 +crawling +0 +12 +4 +3 +2 +1$/);
    assert.equal(lines[1]!.length, lines[0]!.length);
  });
});
