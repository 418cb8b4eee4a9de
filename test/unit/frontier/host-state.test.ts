import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HostState } from '../../../src/frontier/host-state.js';
import type { QueueItem } from '../../../src/frontier/host-queue.js';

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

  test('drain empties the queue (and the retries) and returns its items in order', () => {
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
    h.addRetry(item(1), 100);
    h.addRetry(item(2), 300);
    h.addRetry(item(3), 200);
    assert.equal(h.nextRetryAt(), 100);
    assert.equal(h.promoteDueRetries(99), 0);
    assert.equal(h.promoteDueRetries(200), 2);
    assert.equal(h.queued, 3);
    assert.deepEqual(h.retries, [{ ...item(2), dueAt: 300 }]);
    assert.equal(h.nextRetryAt(), 300);
    assert.equal(h.promoteDueRetries(Infinity), 1);
    assert.equal(h.nextRetryAt(), Infinity);
    const queue = h.drain();
    assert.deepEqual(queue[0], item(0));
    assert.deepEqual(
      queue.slice(1, 3).sort((a, b) => a.key.localeCompare(b.key)),
      [item(1), item(3)],
      'queue items, without dueAt',
    );
    assert.deepEqual(queue[3], item(2));
  });

  test('claims: queued and retrying keys are claimed; done keys are not; drain gives claims back', () => {
    const h = new HostState('example.org', RULES);
    h.push(item(0));
    h.addRetry(item(1), 100);
    assert.equal(h.isClaimed('k0'), true);
    assert.equal(h.isKnown('k1'), true);
    h.markDone('k0');
    assert.equal(h.isClaimed('k0'), false);
    assert.equal(h.isDone('k0'), true);
    assert.equal(h.isKnown('k0'), true);
    h.drain();
    assert.equal(h.isClaimed('k1'), false);
  });

  test('filter gives back the claims of dropped items, except those waiting as retries', () => {
    const h = new HostState('example.org', RULES);
    h.push(item(0));
    h.push(item(1));
    h.addRetry(item(1), 100);
    h.filter(() => false);
    assert.equal(h.isClaimed('k0'), false);
    assert.equal(h.isClaimed('k1'), true);
  });

  test('a failed key keeps its errs record until it is done', () => {
    const h = new HostState('example.org', RULES);
    const rec = { attempts: 1 } as unknown as Parameters<HostState['failed']>[1];
    h.failed('k0', rec);
    assert.equal(h.errsOf('k0'), rec);
    h.markDone('k0');
    assert.equal(h.errsOf('k0'), undefined);
  });

  test('a request takes the politeness slot (beginRequest) and gives it back (endRequest); the gap counts from its start', () => {
    const h = new HostState('example.org', RULES);
    assert.equal(h.beginRequest(5_000), -Infinity, 'no start before');
    assert.equal(h.inFlight, 1);
    assert.equal(h.politeness.nextStartAt(5_000), 6_000, '--delay 1 s after the start');
    h.endRequest('ok');
    assert.equal(h.inFlight, 0);
    const previous = h.beginRequest(6_000);
    h.sentNothing(previous);
    h.endRequest('ok');
    assert.equal(h.politeness.nextStartAt(6_000), 6_000, 'a request that sent nothing takes no turn');
    h.pauseUntil(9_000);
    assert.equal(h.politeness.nextStartAt(6_000), 9_000, 'Retry-After');
  });

  test('the next hop of a redirect waits for the gap within the slot held (hopWaitMs, sending)', () => {
    const h = new HostState('example.org', RULES);
    h.beginRequest(0);
    assert.equal(h.hopWaitMs(400), 600, '--delay 1 s from the start');
    h.sending(1_000);
    assert.equal(h.hopWaitMs(1_000), 1_000, 'the gap counts from the hop');
    assert.equal(h.inFlight, 1, 'a hop takes no second slot');
    h.endRequest('ok');
  });

  test('whenIdle runs once, when the last request in flight ends', () => {
    const h = new HostState('example.org', RULES);
    h.beginRequest(0);
    h.beginRequest(0);
    let idle = 0;
    h.whenIdle(() => idle++);
    h.endRequest('ok');
    assert.equal(idle, 0, 'one still in flight');
    h.endRequest('transient');
    assert.equal(idle, 1);
    h.beginRequest(10_000);
    h.endRequest('ok');
    assert.equal(idle, 1, 'once');
  });

  test('releasing is the last phase', () => {
    const h = new HostState('example.org', RULES);
    assert.equal(h.moveTo('ready'), true);
    assert.equal(h.letGo(), true);
    assert.equal(h.letGo(), false);
    assert.equal(h.moveTo('blocked'), false);
    assert.equal(h.phase, 'releasing');
  });
});
