import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WakeableSleep } from '../../../src/util/wakeable-sleep.js';
import { FakeClock } from '../../support/fake-clock.js';

test('a sleep ends when its time comes on the clock, or earlier at wake(); a wake with nobody asleep does nothing', async () => {
  const clock = new FakeClock();
  const sleeper = new WakeableSleep(clock);
  sleeper.wake();
  let ended = false;
  void sleeper.sleep(1_000).then(() => (ended = true));
  clock.advance(999);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(ended, false);
  clock.advance(1);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(ended, true, 'its time came');

  let woken = false;
  void sleeper.sleep(60_000).then(() => (woken = true));
  sleeper.wake();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(woken, true, 'woken before its time');
});
