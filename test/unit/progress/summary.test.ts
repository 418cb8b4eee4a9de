import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CrawlStats } from '../../../src/progress/stats.js';
import { formatBytes, formatSummary, summaryOf } from '../../../src/progress/summary.js';

function statsWith(fill: (s: CrawlStats) => void): CrawlStats {
  const s = new CrawlStats(() => 0);
  fill(s);
  return s;
}

describe('formatBytes', () => {
  test('binary units, one decimal above bytes', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1023), '1023 B');
    assert.equal(formatBytes(1024), '1.0 KiB');
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatBytes(5 * 1024 ** 2), '5.0 MiB');
    assert.equal(formatBytes(3.25 * 1024 ** 3), '3.3 GiB');
    assert.equal(formatBytes(2 * 1024 ** 4), '2.0 TiB');
    assert.equal(formatBytes(2048 * 1024 ** 4), '2048.0 TiB', 'TiB is the largest unit');
  });
});

describe('summaryOf', () => {
  test('counts, rounded rates, errors sorted by count, and only the cuts that happened', () => {
    const s = statsWith((s) => {
      s.pages = 100;
      s.htmlPages = 90;
      s.bytes = 12345;
      s.requests = 120;
      s.round = 4;
      s.countError('HTTP_404', true);
      s.countError('HTTP_503', false);
      s.countError('HTTP_503', false);
      s.countError('HTTP_503', true);
      s.cut.depth = 3;
      s.cut.truncated = 1;
    });
    s.discovery.reseeds = 2;
    s.discovery.cpuMicros = 1_234_567;
    s.heartbeats.beats = 3;
    s.heartbeats.totalMs = 100;
    s.heartbeats.maxMs = 61.6;
    const { cpuSeconds, discovery, heartbeats, ...sum } = summaryOf(s, 12.345, 'complete');
    assert.deepEqual(heartbeats, { beats: 3, meanMs: 33.3, maxMs: 61.6 }, 'the mean and the longest to 0.1 ms');
    // One beat of 24.46 ms: its mean and its maximum are the same number (was 24.5 and 24).
    const one = statsWith((t) => {
      t.heartbeats.beats = 1;
      t.heartbeats.totalMs = 24.46;
      t.heartbeats.maxMs = 24.46;
    });
    assert.deepEqual(summaryOf(one, 1, 'complete').heartbeats, { beats: 1, meanMs: 24.5, maxMs: 24.5 });
    assert.ok(typeof cpuSeconds === 'number' && cpuSeconds > 0, 'the process CPU so far');
    assert.deepEqual(discovery, { reseeds: 2, recordsRead: 0, handoffsRead: 0, cpuMicros: 1_234_567, cpuSeconds: 1.235 });
    assert.deepEqual(sum, {
      reason: 'complete',
      pages: 100,
      htmlPages: 90,
      bytes: 12345,
      requests: 120,
      seconds: 12.3,
      pagesPerSecond: 8.1,
      rounds: 4,
      errors: { HTTP_503: 3, HTTP_404: 1 },
      finalErrors: { HTTP_404: 1, HTTP_503: 1 },
      cut: { depth: 3, truncated: 1 },
    });
    assert.deepEqual(Object.keys(sum.errors as object), ['HTTP_503', 'HTTP_404'], 'most frequent first');
  });

  test('no time passed: 0 pages per second; hook errors only when there were some', () => {
    const none = summaryOf(
      statsWith(() => undefined),
      0,
      'max-pages',
    );
    assert.equal(none.pagesPerSecond, 0);
    assert.equal('hookErrors' in none, false);
    assert.deepEqual(none.cut, {});
    const hooked = summaryOf(
      statsWith((s) => (s.hookErrors = 2)),
      1,
      'complete',
    );
    assert.equal(hooked.hookErrors, 2);
  });
});

describe('formatSummary', () => {
  test('a clean run: one line of totals and "errors: none"', () => {
    const s = statsWith((s) => {
      s.pages = 10;
      s.htmlPages = 8;
      s.bytes = 2048;
      s.requests = 11;
      s.round = 2;
    });
    assert.equal(
      formatSummary(s, 5, 'complete'),
      'done (complete): 10 pages (8 HTML, 2.0 KiB) in 5 s, 2 pages/s, 11 requests, 2 rounds\nerrors: none',
    );
  });

  test('one round is "1 round"', () => {
    const s = statsWith((t) => (t.round = 1));
    assert.match(formatSummary(s, 1, 'complete'), /, 1 round\n/);
  });

  test('one of anything is singular: page, request, URL excluded', () => {
    const s = statsWith((t) => {
      t.pages = 1;
      t.htmlPages = 1;
      t.requests = 1;
      t.round = 1;
      t.countError('ROBOTS_DISALLOWED', true);
    });
    const lines = formatSummary(s, 1, 'complete').split('\n');
    assert.match(lines[0]!, /^done \(complete\): 1 page \(1 HTML, 0 B\) in 1 s, 1 pages\/s, 1 request, 1 round$/);
    assert.equal(lines[2], 'excluded by robots.txt: 1 URL (not fetched)');
  });

  test('errors, cuts and hook failures each get a line', () => {
    const s = statsWith((s) => {
      s.pages = 3;
      s.countError('HTTP_404', true);
      s.countError('FETCH_TIMEOUT', false);
      s.countError('FETCH_TIMEOUT', false);
      s.cut.frontierFull = 7;
      s.hookErrors = 1;
    });
    const lines = formatSummary(s, 2, 'interrupted').split('\n');
    assert.equal(lines.length, 4);
    assert.match(lines[0]!, /^done \(interrupted\): 3 pages/);
    assert.equal(lines[1], 'errors: FETCH_TIMEOUT 2, HTTP_404 1');
    assert.equal(lines[2], 'cut: frontierFull 7');
    assert.match(lines[3]!, /--hook threw 1 time, timed out 0 times/);
  });

  test('URLs robots.txt excludes are not errors: a line of their own, and `excluded` in the JSON', () => {
    const s = statsWith((s) => {
      s.pages = 3;
      s.countError('ROBOTS_DISALLOWED', true);
      s.countError('ROBOTS_DISALLOWED', true);
      s.countError('HTTP_404', true);
    });
    const lines = formatSummary(s, 2, 'complete').split('\n');
    assert.equal(lines[1], 'errors: HTTP_404 1');
    assert.equal(lines[2], 'excluded by robots.txt: 2 URLs (not fetched)');
    const sum = summaryOf(s, 2, 'complete');
    assert.equal(sum.excluded, 2);
    assert.deepEqual(sum.errors, { ROBOTS_DISALLOWED: 2, HTTP_404: 1 }, 'by code as before');
    const healthy = statsWith((t) => t.countError('ROBOTS_DISALLOWED', true));
    assert.equal(formatSummary(healthy, 1, 'complete').split('\n')[1], 'errors: none');
  });
});
