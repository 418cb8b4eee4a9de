import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { holdingsLine, judgeOutcome } from '../../../src/cli/run-outcome.js';
import { ExitCode } from '../../../src/errors.js';
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

function holdings(
  hosts: HostHoldings[],
  byCode: Record<string, number>,
  excluded: number,
  sampleError: Holdings['sampleError'] = null,
): Holdings {
  const total = Object.values(byCode).reduce((a, b) => a + b, 0);
  return {
    pages: hosts.reduce((a, h) => a + h.pages, 0),
    htmlFiles: 0,
    errors: { total, final: total, byCode, excluded },
    retries: { pending: 0, nextAt: null },
    hosts,
    lastActivity: null,
    sampleError,
  };
}

describe('holdingsLine', () => {
  test('counts the hosts `status` lists: an unreachable seed is a host of the data directory', () => {
    const h = holdings([host('127.0.0.9_1', 0, 1)], { CONNECTION_REFUSED: 1 }, 0);
    assert.equal(holdingsLine(h), 'data directory: 0 pages of 1 host, 1 error (1 final: CONNECTION_REFUSED 1)');
  });

  test('URLs robots.txt excludes are counted apart from the errors', () => {
    const healthy = holdings([host('a', 10, 3, 3)], { ROBOTS_DISALLOWED: 3 }, 3);
    assert.equal(holdingsLine(healthy), 'data directory: 10 pages of 1 host, 0 errors, 3 excluded by robots.txt');
    const both = holdings([host('a', 10, 5, 3)], { ROBOTS_DISALLOWED: 3, HTTP_404: 2 }, 3);
    assert.equal(holdingsLine(both), 'data directory: 10 pages of 1 host, 2 errors (2 final: HTTP_404 2), 3 excluded by robots.txt');
  });
});

describe('judgeOutcome', () => {
  const complete = { reason: 'complete', exitCode: ExitCode.OK } as const;
  const robots = { url: 'http://a/', code: 'ROBOTS_DISALLOWED', message: 'robots.txt forbids http://a/' };

  test('pages stored, or nothing recorded at all: the end as it was', () => {
    assert.deepEqual(judgeOutcome(complete, holdings([host('a', 3, 1)], { HTTP_404: 1 }, 0)), complete);
    assert.deepEqual(judgeOutcome(complete, holdings([], {}, 0)), complete);
  });

  test('no page and only failures: NOTHING_FETCHED, every seed failed, the failure named', () => {
    const refused = { url: 'http://b/', code: 'CONNECTION_REFUSED', message: 'connection refused' };
    const end = judgeOutcome(complete, holdings([host('b', 0, 1)], { CONNECTION_REFUSED: 1 }, 0, refused));
    assert.equal(end.exitCode, ExitCode.NOTHING_FETCHED);
    assert.equal(
      end.message,
      'NOTHING_FETCHED: every seed failed and no page was stored (CONNECTION_REFUSED http://b/: connection refused); errors: CONNECTION_REFUSED 1 (see mountcrawl status)',
    );
  });

  test('no page and only exclusions: said as robots.txt excluding the seeds, not as failures', () => {
    const end = judgeOutcome(complete, holdings([host('a', 0, 1, 1)], { ROBOTS_DISALLOWED: 1 }, 1, robots));
    assert.equal(end.exitCode, ExitCode.NOTHING_FETCHED);
    assert.equal(
      end.message,
      'NOTHING_FETCHED: robots.txt excludes every seed, so no page was stored (http://a/); 1 URL excluded (see mountcrawl status)',
    );
    assert.doesNotMatch(end.message!, /failed|errors:/);
  });

  test('failures and exclusions: the errors without the exclusions, which are counted apart', () => {
    const gone = { url: 'http://a/x', code: 'HTTP_404', message: 'HTTP 404' };
    const end = judgeOutcome(complete, holdings([host('a', 0, 3, 2)], { ROBOTS_DISALLOWED: 2, HTTP_404: 1 }, 2, gone));
    assert.equal(
      end.message,
      'NOTHING_FETCHED: every seed failed and no page was stored (HTTP_404 http://a/x: HTTP 404); errors: HTTP_404 1, 2 excluded by robots.txt (see mountcrawl status)',
    );
  });

  test('a run that stopped early is not judged', () => {
    const stopped = { reason: 'stopped', exitCode: ExitCode.INTERRUPTED } as const;
    assert.deepEqual(judgeOutcome(stopped, holdings([host('a', 0, 1)], { HTTP_404: 1 }, 0)), stopped);
  });
});
