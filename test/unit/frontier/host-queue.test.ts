import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HostQueue } from '../../../src/frontier/host-queue.js';

const item = (name: string, depth: number, priority?: number) => ({
  url: name,
  key: name,
  depth,
  ...(priority === undefined ? {} : { priority }),
});

describe('HostQueue', () => {
  test('without priorities: breadth first by depth, first queued first among equals', () => {
    const q = new HostQueue();
    for (const it of [item('a', 1), item('deep', 2), item('b', 1), item('root', 0), item('c', 1)]) q.push(it);
    const out: string[] = [];
    while (q.length > 0) out.push(q.shift()!.url);
    assert.deepEqual(out, ['root', 'a', 'b', 'c', 'deep']);
    assert.equal(q.shift(), undefined);
  });

  test('the higher priority first; ties keep their order; drain returns the shift order', () => {
    const q = new HostQueue();
    for (let i = 0; i < 50; i++) q.push(item(`p${i}`, 1, i % 3));
    const expected = [...Array(50).keys()]
      .map((i) => ({ i, p: i % 3 }))
      .sort((a, b) => b.p - a.p || a.i - b.i)
      .map((e) => `p${e.i}`);
    assert.deepEqual(
      q.drain().map((it) => it.url),
      expected,
    );
    assert.equal(q.length, 0);
    for (let i = 0; i < 50; i++) q.push(item(`p${i}`, 1, i % 3));
    const shifted: string[] = [];
    while (q.length > 0) shifted.push(q.shift()!.url);
    assert.deepEqual(shifted, expected);
  });

  test('items pushed first go ahead of any priority, in the order they came', () => {
    const q = new HostQueue();
    q.push(item('root', 0));
    q.push(item('skip-1', 3), true);
    q.push(item('urgent', 1, 1e9));
    q.push(item('skip-2', 1), true);
    const out: string[] = [];
    while (q.length > 0) out.push(q.shift()!.url);
    assert.deepEqual(out, ['skip-1', 'skip-2', 'urgent', 'root']);
  });
});
