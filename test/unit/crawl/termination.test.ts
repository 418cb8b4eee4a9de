import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ALONE_POLL_MS, WATCH_POLL_MS, afterEmptyReseed, type IdleView } from '../../../src/crawl/termination.js';

const START = 10_000;
const BASE: IdleView = {
  watch: false,
  allIdleBefore: START - 1,
  reseedStart: START,
  peersWroteAfter: Infinity,
  peersSettled: true,
  observations: 2,
  wasIdle: true,
  allIdleNow: true,
  alone: true,
  heartbeatMs: 1_000,
};

/**
 * Every combination of what a node may see (allIdleBefore: unknown, before, at, after the
 * reseed's start; peersWroteAfter: before, at, after allIdleBefore, or no peer; peers settled or not).
 */
function* everyView(): Generator<IdleView> {
  for (const watch of [false, true])
    for (const allIdleBefore of [undefined, START - 1, START, START + 1])
      for (const wrote of [-Infinity, START - 2, START - 1, START + 5, Infinity])
        for (const peersSettled of [false, true])
          for (const observations of [0, 1, 2, 3])
            for (const wasIdle of [false, true])
              for (const allIdleNow of [false, true])
                for (const alone of [false, true])
                  for (const heartbeatMs of [500, 5_000])
                    yield {
                      watch,
                      allIdleBefore,
                      reseedStart: START,
                      peersWroteAfter: wrote,
                      peersSettled,
                      observations,
                      wasIdle,
                      allIdleNow,
                      alone,
                      heartbeatMs,
                    };
}

describe('afterEmptyReseed: the termination rule', () => {
  test('every case: complete exactly when a reseed begun after all were idle found nothing (2+ reads), every peer wrote a record after and says it settled in this view, never in --watch', () => {
    let cases = 0;
    for (const v of everyView()) {
      cases++;
      const step = afterEmptyReseed(v);
      const ends =
        !v.watch &&
        v.allIdleBefore !== undefined &&
        v.allIdleBefore < v.reseedStart &&
        v.peersWroteAfter >= v.allIdleBefore &&
        v.peersSettled &&
        v.observations >= 2;
      assert.equal(step.kind === 'complete', ends, JSON.stringify(v));
      if (step.kind === 'complete') continue;
      assert.equal(step.publishIdle, !v.wasIdle, `a node that just went idle publishes it: ${JSON.stringify(v)}`);
      const again = !v.wasIdle && !v.watch && v.allIdleBefore === undefined && v.allIdleNow;
      assert.equal(step.kind === 'reseed', again, `reseed at once: ${JSON.stringify(v)}`);
      if (step.kind === 'wait') {
        const ms = v.watch ? Math.max(v.heartbeatMs, WATCH_POLL_MS) : v.alone ? ALONE_POLL_MS : v.heartbeatMs;
        assert.equal(step.ms, ms, JSON.stringify(v));
      }
    }
    assert.equal(cases, 2 * 4 * 5 * 2 * 4 * 2 * 2 * 2 * 2);
  });

  test('alone and idle after a reseed that began after it went idle: complete', () => {
    assert.deepEqual(afterEmptyReseed(BASE), { kind: 'complete' });
  });

  test('a reseed that began before (or when) every node was idle proves nothing', () => {
    assert.equal(afterEmptyReseed({ ...BASE, allIdleBefore: START }).kind, 'wait');
    assert.equal(afterEmptyReseed({ ...BASE, allIdleBefore: START + 1 }).kind, 'wait');
  });

  test('a peer that wrote no record since every node was idle may have been killed while idle: wait (it is found dead, or lived after every hand-off to it)', () => {
    const peers = { ...BASE, alone: false, allIdleBefore: START - 100 };
    assert.deepEqual(afterEmptyReseed({ ...peers, peersWroteAfter: START - 101 }), { kind: 'wait', ms: 1_000, publishIdle: false });
    assert.deepEqual(afterEmptyReseed({ ...peers, peersWroteAfter: -Infinity }), { kind: 'wait', ms: 1_000, publishIdle: false });
    assert.deepEqual(afterEmptyReseed({ ...peers, peersWroteAfter: START - 100 }), { kind: 'complete' });
    assert.deepEqual(afterEmptyReseed({ ...peers, peersWroteAfter: START + 50 }), { kind: 'complete' });
  });

  test('a peer that proved itself alive but has not said it read its inbox in this view may be killed before it does: wait (it says so, or is found dead)', () => {
    const peers = { ...BASE, alone: false, allIdleBefore: START - 100, peersWroteAfter: START - 50 };
    assert.deepEqual(afterEmptyReseed({ ...peers, peersSettled: false }), { kind: 'wait', ms: 1_000, publishIdle: false });
    assert.deepEqual(afterEmptyReseed({ ...peers, peersSettled: true }), { kind: 'complete' });
  });

  test('one read of the nodes directory is not enough (a peer may not have been seen yet)', () => {
    assert.equal(afterEmptyReseed({ ...BASE, observations: 1 }).kind, 'wait');
  });

  test('--watch never ends; it polls at least every 2 s', () => {
    assert.deepEqual(afterEmptyReseed({ ...BASE, watch: true, heartbeatMs: 500 }), { kind: 'wait', ms: WATCH_POLL_MS, publishIdle: false });
    assert.deepEqual(afterEmptyReseed({ ...BASE, watch: true, heartbeatMs: 5_000 }), { kind: 'wait', ms: 5_000, publishIdle: false });
  });

  test('the last node to go idle publishes it and reseeds again at once', () => {
    assert.deepEqual(afterEmptyReseed({ ...BASE, allIdleBefore: undefined, wasIdle: false, alone: false }), {
      kind: 'reseed',
      publishIdle: true,
    });
  });

  test('with busy peers: publish, then wait a heartbeat', () => {
    assert.deepEqual(afterEmptyReseed({ ...BASE, allIdleBefore: undefined, wasIdle: false, allIdleNow: false, alone: false }), {
      kind: 'wait',
      ms: 1_000,
      publishIdle: true,
    });
  });
});
