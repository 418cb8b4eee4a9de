import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { holdingsLine } from '../../../src/cli/run-outcome.js';
import type { Holdings, HostHoldings } from '../../../src/store/holdings.js';

const host = (name: string, pages: number, errors: number, excluded = 0): HostHoldings => ({
  host: name,
  pages,
  html: pages,
  errors,
  excluded,
  retrying: 0,
  lastWrite: null,
});

function holdings(hosts: HostHoldings[], byCode: Record<string, number>, excluded: number): Holdings {
  const total = Object.values(byCode).reduce((a, b) => a + b, 0);
  return {
    pages: hosts.reduce((a, h) => a + h.pages, 0),
    htmlFiles: 0,
    errors: { total, final: total, byCode, excluded },
    retries: { pending: 0, nextAt: null },
    hosts,
    lastActivity: null,
    sampleError: null,
  };
}

describe('holdingsLine', () => {
  test('counts the hosts `status` lists: an unreachable seed is a host of the data directory', () => {
    const h = holdings([host('127.0.0.9_1', 0, 1)], { CONNECTION_REFUSED: 1 }, 0);
    assert.equal(holdingsLine(h), 'data directory: 0 pages of 1 hosts, 1 errors (1 final: CONNECTION_REFUSED 1)');
  });

  test('URLs robots.txt excludes are counted apart from the errors', () => {
    const healthy = holdings([host('a', 10, 3, 3)], { ROBOTS_DISALLOWED: 3 }, 3);
    assert.equal(holdingsLine(healthy), 'data directory: 10 pages of 1 hosts, 0 errors, 3 excluded by robots.txt');
    const both = holdings([host('a', 10, 5, 3)], { ROBOTS_DISALLOWED: 3, HTTP_404: 2 }, 3);
    assert.equal(holdingsLine(both), 'data directory: 10 pages of 1 hosts, 2 errors (2 final: HTTP_404 2), 3 excluded by robots.txt');
  });
});
