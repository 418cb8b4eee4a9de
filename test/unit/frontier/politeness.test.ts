import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Politeness, type PolitenessRules } from '../../../src/frontier/politeness.js';

// Times are plain numbers (monotonic milliseconds): no clock is read, nothing waits.
const RULES: PolitenessRules = { perHost: 2, delayMs: 1_000, crawlDelayCapMs: 30_000 };

describe('Politeness: requests in flight', () => {
  test('at most perHost at once; a finished request frees a slot', () => {
    const p = new Politeness(RULES);
    assert.equal(p.nextStartAt(0), 0);
    p.started(0);
    assert.equal(p.inFlight, 1);
    assert.equal(p.nextStartAt(5_000), 5_000);
    p.started(5_000);
    assert.equal(p.inFlight, 2);
    assert.equal(p.nextStartAt(10_000), Infinity, 'both slots are taken');
    p.finished('ok');
    assert.equal(p.inFlight, 1);
    assert.equal(p.nextStartAt(10_000), 10_000);
  });

  test('every outcome frees the slot', () => {
    const p = new Politeness({ ...RULES, perHost: 1 });
    for (const outcome of ['ok', 'transient', 'final'] as const) {
      p.started(0);
      assert.equal(p.nextStartAt(0), Infinity);
      p.finished(outcome);
      assert.equal(p.inFlight, 0, outcome);
    }
  });
});

describe('Politeness: the gap between starts', () => {
  test('starts are at least delayMs apart', () => {
    const p = new Politeness(RULES);
    p.started(100);
    assert.equal(p.nextStartAt(100), 1_100);
    assert.equal(p.nextStartAt(600), 1_100);
    assert.equal(p.nextStartAt(2_000), 2_000, 'later than the gap: now');
  });

  test('robots.txt Crawl-delay lengthens the gap, never shortens it, and is capped', () => {
    const p = new Politeness(RULES);
    p.setCrawlDelay(5);
    assert.equal(p.gapMs, 5_000);
    p.setCrawlDelay(0.5);
    assert.equal(p.gapMs, 1_000, 'the delay option is the floor');
    p.setCrawlDelay(3_600);
    assert.equal(p.gapMs, 30_000, 'capped at crawlDelayCapMs');
  });

  test('a missing or nonsensical Crawl-delay is no Crawl-delay', () => {
    const p = new Politeness(RULES);
    for (const s of [undefined, Number.NaN, -5, Infinity]) {
      p.setCrawlDelay(s);
      assert.equal(p.gapMs, 1_000, String(s));
    }
  });

  test('with no delay configured, requests may start back to back', () => {
    const p = new Politeness({ perHost: 4, delayMs: 0, crawlDelayCapMs: 0 });
    p.started(10);
    assert.equal(p.nextStartAt(10), 10);
  });
});

describe('Politeness: slowing down a struggling host', () => {
  test('each transient failure doubles the gap (from at least 250 ms), up to 64 times', () => {
    const p = new Politeness({ perHost: 1, delayMs: 0, crawlDelayCapMs: 0 });
    const gaps: number[] = [];
    for (let i = 0; i < 8; i++) {
      p.started(0);
      p.finished('transient');
      gaps.push(p.gapMs);
    }
    assert.deepEqual(gaps, [500, 1_000, 2_000, 4_000, 8_000, 16_000, 16_000, 16_000]);
  });

  test('each success halves the slow-down again, back to the plain gap', () => {
    const p = new Politeness(RULES);
    for (let i = 0; i < 3; i++) {
      p.started(0);
      p.finished('transient');
    }
    assert.equal(p.gapMs, 8_000);
    const gaps: number[] = [];
    for (let i = 0; i < 4; i++) {
      p.started(0);
      p.finished('ok');
      gaps.push(p.gapMs);
    }
    assert.deepEqual(gaps, [4_000, 2_000, 1_000, 1_000]);
  });

  test('a final failure (404) changes nothing', () => {
    const p = new Politeness(RULES);
    p.started(0);
    p.finished('final');
    assert.equal(p.gapMs, 1_000);
  });
});

describe('Politeness: pauses (Retry-After, robots.txt unavailable)', () => {
  test('no request starts before the pause ends', () => {
    const p = new Politeness(RULES);
    p.pauseUntil(60_000);
    assert.equal(p.pausedUntil, 60_000);
    assert.equal(p.nextStartAt(0), 60_000);
    assert.equal(p.nextStartAt(70_000), 70_000);
  });

  test('a shorter pause does not cut a longer one short', () => {
    const p = new Politeness(RULES);
    p.pauseUntil(60_000);
    p.pauseUntil(10_000);
    assert.equal(p.pausedUntil, 60_000);
  });

  test('the pause and the gap combine: whichever is later', () => {
    const p = new Politeness(RULES);
    p.started(50_000);
    p.pauseUntil(50_500);
    assert.equal(p.nextStartAt(50_000), 51_000);
  });
});

describe('Politeness: redirect hops within a held slot', () => {
  test('a hop waits for the gap since the last start and for any pause', () => {
    const p = new Politeness(RULES);
    p.started(0);
    assert.equal(p.hopWaitMs(0), 1_000);
    assert.equal(p.hopWaitMs(400), 600);
    assert.equal(p.hopWaitMs(5_000), 0);
    p.pauseUntil(8_000);
    assert.equal(p.hopWaitMs(5_000), 3_000);
  });

  test('a hop moves the last start but takes no new slot', () => {
    const p = new Politeness(RULES);
    p.started(0);
    p.sending(2_000);
    assert.equal(p.inFlight, 1);
    assert.equal(p.hopWaitMs(2_000), 1_000);
    assert.equal(p.nextStartAt(2_000), 3_000);
  });

  test('a request sent after its slot counts the gap from its send; one sent at once changes nothing', () => {
    const p = new Politeness({ ...RULES, perHost: 2 });
    p.started(0);
    p.sending(0);
    p.finished('ok');
    assert.equal(p.nextStartAt(0), 1_000);
    p.started(1_000);
    p.sending(1_300); // a busy node: the request went out 300 ms after its slot
    assert.equal(p.nextStartAt(1_300), 2_300, 'the gap counts from the send, not the slot');
    p.sending(1_200); // never earlier than a start already counted
    assert.equal(p.nextStartAt(1_300), 2_300);
  });
});

describe('Politeness.limit: which rule holds the next request back', () => {
  test('the delay, a larger Crawl-delay, a Retry-After pause, the slow-down, or nothing', () => {
    const p = new Politeness({ perHost: 2, delayMs: 100, crawlDelayCapMs: 30_000 });
    assert.equal(p.limit(0), undefined, 'nothing started yet: may go now');
    p.started(0);
    assert.equal(p.limit(50), 'delay');
    p.setCrawlDelay(1);
    assert.equal(p.limit(50), 'crawl-delay');
    p.pauseUntil(5_000);
    assert.equal(p.limit(50), 'retry-after');
    assert.equal(p.limit(6_000), undefined);
    p.finished('transient');
    assert.equal(p.limit(6_000), undefined, 'the gap since the last start is over');
    p.started(6_000);
    assert.equal(p.limit(6_100), 'slowdown');
  });
});
