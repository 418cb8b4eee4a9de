import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HostState, type QueueItem } from '../../src/frontier/host-state.js';

const RULES = { perHost: 2, delayMs: 1_000, crawlDelayCapMs: 30_000 };
const item = (n: number, depth = 1): QueueItem => ({ url: `http://example.org/${n}`, key: `k${n}`, depth });

describe('HostState', () => {
  test('a new host: acquiring, nothing queued, politeness from the rules', () => {
    const h = new HostState('example.org', RULES);
    assert.equal(h.dir, 'example.org');
    assert.equal(h.phase, 'acquiring');
    assert.equal(h.queued, 0);
    assert.equal(h.shift(), undefined);
    assert.equal(h.nextRetryAt(), Infinity);
    assert.equal(h.politeness.gapMs, 1_000);
    assert.equal(h.politeness.nextStartAt(0), 0);
    assert.equal(h.leaseLost, false);
  });

  test('the queue is FIFO (breadth first as URLs arrive)', () => {
    const h = new HostState('example.org', RULES);
    for (let i = 0; i < 4; i++) h.push(item(i));
    assert.equal(h.queued, 4);
    assert.deepEqual([h.shift(), h.shift()], [item(0), item(1)]);
    assert.equal(h.queued, 2);
  });

  test('drain empties the queue and returns its items in order', () => {
    const h = new HostState('example.org', RULES);
    for (let i = 0; i < 3; i++) h.push(item(i));
    assert.deepEqual(h.drain(), [item(0), item(1), item(2)]);
    assert.equal(h.queued, 0);
  });

  test('filter keeps the items it is told to, in order, and returns the others', () => {
    const h = new HostState('example.org', RULES);
    for (let i = 0; i < 6; i++) h.push(item(i));
    const dropped = h.filter((it) => Number(it.key.slice(1)) % 2 === 0);
    assert.deepEqual(dropped, [item(1), item(3), item(5)]);
    assert.equal(h.queued, 3);
    assert.deepEqual(h.drain(), [item(0), item(2), item(4)]);
  });

  test('promoteDueRetries moves only due retries to the queue, after what is queued', () => {
    const h = new HostState('example.org', RULES);
    h.push(item(0));
    h.retries.push({ ...item(1), dueAt: 100 }, { ...item(2), dueAt: 300 }, { ...item(3), dueAt: 200 });
    assert.equal(h.nextRetryAt(), 100);
    assert.equal(h.promoteDueRetries(99), 0);
    assert.equal(h.promoteDueRetries(200), 2);
    assert.equal(h.queued, 3);
    assert.deepEqual(h.retries, [{ ...item(2), dueAt: 300 }]);
    assert.equal(h.nextRetryAt(), 300);
    const queue = h.drain();
    assert.deepEqual(queue[0], item(0));
    assert.deepEqual(
      queue.slice(1).sort((a, b) => a.key.localeCompare(b.key)),
      [item(1), item(3)],
      'queue items, without dueAt',
    );
    assert.equal(h.promoteDueRetries(Infinity), 1);
    assert.equal(h.nextRetryAt(), Infinity);
    assert.deepEqual(h.drain(), [item(2)]);
  });
});
