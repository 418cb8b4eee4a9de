import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Random } from '../../../src/sim/random.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import { SimClock } from '../../../src/sim/sim-clock.js';

describe('Random', () => {
  test('one seed gives one sequence; forks are their own and as reproducible', () => {
    const a = new Random(7);
    const b = new Random(7);
    const seqA = Array.from({ length: 5 }, () => a.int(1000));
    assert.deepEqual(
      seqA,
      Array.from({ length: 5 }, () => b.int(1000)),
    );
    assert.notDeepEqual(
      seqA,
      Array.from({ length: 5 }, () => new Random(8).int(1000)),
    );
    assert.equal(new Random(7).fork('x').next(), new Random(7).fork('x').next());
    assert.notEqual(new Random(7).fork('x').next(), new Random(7).fork('y').next());
  });
});

describe('Scheduler', () => {
  test('events run in order of time, then of making, and promise continuations settle between them', async () => {
    const s = new Scheduler();
    const seen: string[] = [];
    s.after(10, () => seen.push('b10'));
    s.after(5, () => {
      seen.push('a5');
      void Promise.resolve()
        .then(() => Promise.resolve())
        .then(() => seen.push('a5 continued'));
    });
    s.after(10, () => seen.push('c10'));
    assert.equal(await s.run(100, () => false), 'empty');
    assert.deepEqual(seen, ['a5', 'a5 continued', 'b10', 'c10']);
    assert.equal(s.now, 10);
  });

  test("a paused process's events wait for its resume; a killed one's never run", async () => {
    const s = new Scheduler();
    const seen: string[] = [];
    s.after(1, () => seen.push(`p@${s.now}`), 'p');
    s.after(2, () => seen.push(`k@${s.now}`), 'k');
    s.after(0, () => {
      s.pause('p');
      s.kill('k');
    });
    s.after(50, () => s.resume('p'));
    await s.run(100, () => false);
    assert.deepEqual(seen, ['p@50']);
  });

  test('a cancelled event does not run; run stops at the time limit', async () => {
    const s = new Scheduler();
    let ran = 0;
    s.after(1, () => ran++).cancel();
    s.after(200, () => ran++);
    assert.equal(await s.run(100, () => false), 'time');
    assert.equal(ran, 0);
  });
});

describe('SimClock', () => {
  test('a clock at rate 2 sees twice the virtual time pass and its timers come due at half the virtual time', async () => {
    const s = new Scheduler();
    const fast = new SimClock(s, 'p', { rate: 2, offsetMs: 0, origin: 100 });
    let firedAt: number | undefined;
    fast.setTimeout(() => {
      firedAt = s.now;
    }, 1000);
    const cleared = fast.setTimeout(() => assert.fail('cleared'), 10);
    fast.clearTimeout(cleared);
    await s.run(10_000, () => false);
    assert.equal(firedAt, 500);
    assert.equal(fast.monotonic(), 100 + 1000);
  });
});
