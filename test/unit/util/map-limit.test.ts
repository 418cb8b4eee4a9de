import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mapLimit } from '../../../src/util/map-limit.js';

/** A promise with its resolve and reject, settled by the test. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('mapLimit', () => {
  test('calls fn once per item, never more than `limit` in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const seen: number[] = [];
    await mapLimit(
      Array.from({ length: 50 }, (_, i) => i),
      4,
      async (i) => {
        inFlight++;
        most = Math.max(most, inFlight);
        // Uneven durations, in event-loop turns, not in time.
        for (let k = 0; k < (i * 7) % 5; k++) await tick();
        seen.push(i);
        inFlight--;
      },
    );
    assert.equal(most, 4);
    assert.deepEqual(
      seen.sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i),
    );
  });

  test('starts the next item as soon as one finishes', async () => {
    const gates = Array.from({ length: 3 }, deferred);
    const started: number[] = [];
    const done = mapLimit([0, 1, 2], 2, async (i) => {
      started.push(i);
      await gates[i]!.promise;
    });
    await tick();
    assert.deepEqual(started, [0, 1]);
    gates[1]!.resolve();
    await tick();
    assert.deepEqual(started, [0, 1, 2]);
    gates[0]!.resolve();
    gates[2]!.resolve();
    await done;
  });

  test('reads a lazy iterable only as far as it needs', async () => {
    let pulled = 0;
    function* items(): Generator<number> {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield i;
      }
    }
    const gates = Array.from({ length: 100 }, deferred);
    const done = mapLimit(items(), 3, (i) => gates[i]!.promise);
    await tick();
    assert.equal(pulled, 3);
    for (const g of gates) g.resolve();
    await done;
    assert.equal(pulled, 100);
  });

  test('rejects with the first error, only after the calls in flight have settled, and starts no more', async () => {
    const gates = Array.from({ length: 10 }, deferred);
    const started: number[] = [];
    const settled: number[] = [];
    const seenAtRejection: { settled?: number[] } = {};
    const done = mapLimit(
      Array.from({ length: 10 }, (_, i) => i),
      3,
      async (i) => {
        started.push(i);
        try {
          await gates[i]!.promise;
        } finally {
          settled.push(i);
        }
      },
    ).catch((err: unknown) => {
      seenAtRejection.settled = [...settled];
      throw err;
    });
    await tick();
    assert.deepEqual(started, [0, 1, 2]);
    gates[1]!.reject(new Error('first'));
    await tick();
    gates[0]!.reject(new Error('second'));
    await tick();
    assert.equal('settled' in seenAtRejection, false, 'item 2 is still in flight: not rejected yet');
    gates[2]!.resolve();
    await assert.rejects(done, /first/);
    assert.deepEqual(seenAtRejection.settled?.sort(), [0, 1, 2], 'every started call had settled');
    assert.deepEqual(started, [0, 1, 2], 'nothing started after the failure');
  });

  test('a limit below 1 runs one at a time; no items resolves at once', async () => {
    let inFlight = 0;
    let most = 0;
    await mapLimit([1, 2, 3], 0, async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await tick();
      inFlight--;
    });
    assert.equal(most, 1);
    let calls = 0;
    await mapLimit([], 8, async () => {
      calls++;
    });
    assert.equal(calls, 0);
  });

  test('a synchronous throw in fn is a rejection like any other', async () => {
    await assert.rejects(
      mapLimit([1], 2, () => {
        throw new Error('sync');
      }),
      /sync/,
    );
  });
});
