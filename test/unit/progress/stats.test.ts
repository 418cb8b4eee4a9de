import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CrawlStats } from '../../../src/progress/stats.js';

/** A monotonic clock moved by hand (milliseconds). */
function fakeMonotonic(start = 5_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('CrawlStats', () => {
  test('starts at zero, state starting, one node alive', () => {
    const s = new CrawlStats(() => 0);
    assert.equal(s.pages, 0);
    assert.equal(s.failureCount, 0);
    assert.equal(s.exclusionCount, 0);
    assert.equal(s.state, 'starting');
    assert.equal(s.nodesAlive, 1);
    assert.deepEqual(Object.values(s.cut), [0, 0, 0, 0, 0, 0, 0, 0]);
  });

  test('countError counts every errs record by code, final ones also apart', () => {
    const s = new CrawlStats(() => 0);
    s.countError('HTTP_503', false);
    s.countError('HTTP_503', false);
    s.countError('HTTP_503', true);
    s.countError('HTTP_404', true);
    s.countError('FETCH_TIMEOUT', false);
    assert.deepEqual(Object.fromEntries(s.errors), { HTTP_503: 3, HTTP_404: 1, FETCH_TIMEOUT: 1 });
    assert.deepEqual(Object.fromEntries(s.finalErrors), { HTTP_503: 1, HTTP_404: 1 });
    assert.equal(s.failureCount, 5);
  });

  test('URLs robots.txt excludes are counted apart from the failures', () => {
    const s = new CrawlStats(() => 0);
    s.countError('ROBOTS_DISALLOWED', true);
    s.countError('ROBOTS_DISALLOWED', true);
    s.countError('HTTP_404', true);
    assert.equal(s.failureCount, 1);
    assert.equal(s.exclusionCount, 2);
  });

  test('rate is 0 before any time has passed', () => {
    const clock = fakeMonotonic();
    const s = new CrawlStats(clock.now);
    s.pages = 10;
    assert.equal(s.rate(), 0);
  });

  test('rate: pages per second since the start while it is shorter than the window', () => {
    const clock = fakeMonotonic();
    const s = new CrawlStats(clock.now);
    clock.advance(2_000);
    s.pages = 10;
    assert.equal(s.rate(), 5);
    clock.advance(2_000);
    s.pages = 30;
    assert.equal(s.rate(), 7.5);
  });

  test('rate: follows roughly the last ten seconds, not the whole run', () => {
    const clock = fakeMonotonic();
    const s = new CrawlStats(clock.now);
    // A long idle minute, sampled every second...
    for (let i = 0; i < 60; i++) {
      clock.advance(1_000);
      assert.equal(s.rate(), 0);
    }
    // ...then 10 pages a second for ten seconds.
    for (let i = 0; i < 10; i++) {
      clock.advance(1_000);
      s.pages += 10;
      s.rate();
    }
    const r = s.rate();
    assert.ok(r > 100 / 12 && r <= 10, `rate ${r}: the idle minute must have left the window`);
    // Then nothing for a long while: the rate falls to 0.
    for (let i = 0; i < 15; i++) {
      clock.advance(1_000);
      s.rate();
    }
    assert.equal(s.rate(), 0);
  });

  test('a steady rate sampled often over a long run is reported as it is', () => {
    const clock = fakeMonotonic();
    const s = new CrawlStats(clock.now);
    for (let i = 0; i < 10_000; i++) {
      clock.advance(100);
      s.pages++;
      s.rate();
    }
    // 10 pages/s throughout.
    assert.ok(Math.abs(s.rate() - 10) < 0.2, String(s.rate()));
  });
});
