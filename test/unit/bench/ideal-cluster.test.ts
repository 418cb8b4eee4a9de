import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { quantile } from '../../../bench/discovery-latency.js';
import { depths, greedy, idealCluster, siteGraph } from '../../../bench/ideal-cluster.js';

const site = { hosts: 5, pagesPerHost: 25, linksPerPage: 6, crossLinks: 2 };

describe('the ideal cluster of the bench', () => {
  test('every page is reached, the seeds at depth 0; the requests are a robots.txt and the pages of each host', () => {
    const d = depths(siteGraph(site));
    assert.ok(d.every((pages) => pages[0] === 0 && pages.every((x) => x >= 0)));
    const i = idealCluster(site, { slots: 4, perHost: 1, delayMs: 0, serviceMs: 100 });
    assert.equal(i.requests, 5 * 26);
    assert.equal(i.maxDepth, Math.max(...d.flat()));
  });

  test('few slots: work over slots bounds it, and the greedy schedule reaches the bound', () => {
    const i = idealCluster(site, { slots: 2, perHost: 1, delayMs: 0, serviceMs: 100 });
    assert.equal(i.workSeconds, (130 * 0.1) / 2);
    assert.equal(i.lowerBoundSeconds, i.workSeconds);
    assert.equal(i.greedySeconds, i.workSeconds);
  });

  test('more slots than hosts: the slowest host bounds it (26 requests one after another at --per-host 1)', () => {
    const i = idealCluster(site, { slots: 32, perHost: 1, delayMs: 0, serviceMs: 100 });
    assert.equal(i.hostSeconds, 2.6);
    assert.equal(i.lowerBoundSeconds, 2.6);
    assert.ok(i.greedySeconds >= i.lowerBoundSeconds - 1e-9);
  });

  test('--delay spaces the starts of a host: 26 starts 300 ms apart end no sooner than 25 x 300 + 100 ms', () => {
    const i = idealCluster(site, { slots: 32, perHost: 2, delayMs: 300, serviceMs: 100 });
    assert.equal(i.hostSeconds, 7.6);
    assert.ok(i.greedySeconds >= 7.6 - 1e-9);
  });

  test('one host whose pages form a chain: the discovery path bounds it, whatever the slots', () => {
    const chain = { hosts: 1, pagesPerHost: 10, linksPerPage: 0 };
    const i = idealCluster(chain, { slots: 8, perHost: 4, delayMs: 0, serviceMs: 100 });
    assert.equal(i.maxDepth, 9);
    assert.equal(i.pathSeconds, 1.1);
    assert.equal(greedy(siteGraph(chain), { slots: 8, perHost: 4, delayMs: 0, serviceMs: 100 }), 1100);
  });
});

test('quantile: nearest rank, NaN for none', () => {
  assert.equal(quantile([5, 1, 3, 2, 4], 0.5), 3);
  assert.equal(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95), 10);
  assert.equal(quantile([1, 2], 1), 2);
  assert.ok(Number.isNaN(quantile([], 0.5)));
});
