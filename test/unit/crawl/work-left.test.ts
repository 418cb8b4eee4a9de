import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nothingInHand, nothingLeft, type WorkLeft } from '../../../src/crawl/work-left.js';

const IDLE: WorkLeft = { queued: 0, inFlight: 0, found: 0, unsent: false, nextRetryAt: Infinity };

describe('nothingInHand', () => {
  test('true only with nothing queued and nothing in flight', () => {
    assert.equal(nothingInHand({ queued: 0, inFlight: 0 }), true);
    assert.equal(nothingInHand({ queued: 1, inFlight: 0 }), false);
    assert.equal(nothingInHand({ queued: 0, inFlight: 1 }), false);
  });
});

describe('nothingLeft', () => {
  test('true when nothing is in hand, found, unsent or due later', () => {
    assert.equal(nothingLeft(IDLE), true);
  });

  test('any one thing left is enough to say no', () => {
    const one: Partial<WorkLeft>[] = [{ queued: 1 }, { inFlight: 1 }, { found: 1 }, { unsent: true }, { nextRetryAt: 5_000 }];
    for (const change of one) assert.equal(nothingLeft({ ...IDLE, ...change }), false, JSON.stringify(change));
  });

  test('a retry due later leaves the hand empty but something left', () => {
    const w = { ...IDLE, nextRetryAt: 1 };
    assert.deepEqual([nothingInHand(w), nothingLeft(w)], [true, false]);
  });
});
