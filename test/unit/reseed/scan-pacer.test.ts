import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SCAN_SHARE, SLICE_MS, ScanPacer } from '../../../src/reseed/scan-pacer.js';
import { FakeClock } from '../../support/fake-clock.js';

/** Calls due() until it says the slice is over; returns how many calls that took (undefined: never within `max`). */
function callsUntilDue(pacer: ScanPacer, max = 10_000): number | undefined {
  for (let i = 1; i <= max; i++) if (pacer.due()) return i;
  return undefined;
}

const settled = async (p: Promise<void>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};

describe('ScanPacer', () => {
  test('a slice is over only once SLICE_MS passed, looked at every 64 offers', () => {
    const clock = new FakeClock();
    const pacer = new ScanPacer(clock, () => false);
    assert.equal(callsUntilDue(pacer), undefined, 'the clock did not move: never due');
    clock.advance(SLICE_MS);
    const calls = callsUntilDue(pacer);
    assert.ok(calls !== undefined && calls <= 64, `due within 64 offers, not ${calls}`);
    // A record's links count as many offers.
    const other = new ScanPacer(clock, () => false);
    clock.advance(SLICE_MS);
    assert.equal(other.due(64), true);
  });

  test('with free request slots it yields at once; with all slots taken it waits to keep to its share', async () => {
    const clock = new FakeClock();
    let saturated = false;
    const pacer = new ScanPacer(clock, () => saturated);
    clock.advance(SLICE_MS);
    assert.equal(await settled(pacer.pause()), true, 'free slots: the pause ends without the clock');
    assert.equal(clock.pending, 0, 'and sets no timer');

    saturated = true;
    clock.advance(2 * SLICE_MS);
    const pause = pacer.pause();
    const wait = (2 * SLICE_MS * (1 - SCAN_SHARE)) / SCAN_SHARE;
    assert.equal(clock.pending, 1, `worked ${2 * SLICE_MS} ms: waits ${wait} ms on the clock`);
    const again = pacer.pause();
    assert.equal(again, pause, 'a second caller waits for the same pause');
    clock.advance(wait - 1);
    assert.equal(await settled(pause), false, 'not before its time');
    clock.advance(1);
    assert.equal(await settled(pause), true);
    // A new slice starts when the pause ends.
    assert.equal(callsUntilDue(pacer), undefined);
  });
});
