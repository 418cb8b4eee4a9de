import assert from 'node:assert/strict';
import { test } from 'node:test';
import { orderedMap } from '../../../src/util/ordered-map.js';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test('orderedMap: results in the order of the items, whatever order the calls end in', async () => {
  const items = Array.from({ length: 50 }, (_, i) => i);
  const out: number[] = [];
  for await (const r of orderedMap(items, 8, async (i) => {
    await pause((i * 7) % 5); // later items often end first
    return i * 2;
  })) {
    out.push(r);
  }
  assert.deepEqual(
    out,
    items.map((i) => i * 2),
  );
});

test('orderedMap: at most `limit` calls in flight, and none started far ahead of a slow consumer', async () => {
  let inFlight = 0;
  let most = 0;
  let started = 0;
  const startedWhenTaken: number[] = [];
  async function* items(): AsyncGenerator<number> {
    for (let i = 0; i < 30; i++) yield i;
  }
  for await (const _ of orderedMap(items(), 4, async (i) => {
    started++;
    inFlight++;
    most = Math.max(most, inFlight);
    await pause(1);
    inFlight--;
    return i;
  })) {
    startedWhenTaken.push(started);
    await pause(3); // the consumer is slower than the calls
  }
  assert.equal(most, 4);
  assert.ok(
    startedWhenTaken.every((s, taken) => s <= taken + 4),
    `started ahead of the consumer: ${startedWhenTaken.join(',')}`,
  );
});

test('orderedMap: an error of a call is thrown in its turn, after the results before it', async () => {
  const out: number[] = [];
  await assert.rejects(async () => {
    for await (const r of orderedMap([0, 1, 2, 3, 4], 3, async (i) => {
      if (i === 3) throw new Error('boom');
      return i;
    })) {
      out.push(r);
    }
  }, /boom/);
  assert.deepEqual(out, [0, 1, 2]);
});
