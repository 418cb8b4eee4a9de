import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SPILL_HEAD } from '../../../src/frontier/frontier.js';
import { SpillRoom } from '../../../src/frontier/spill-room.js';
import { frontierRig } from '../../support/frontier-rig.js';
import { freshDirs } from '../../support/temp-paths.js';

const spillDirs = freshDirs('mountcrawl-frontier-spill-');

const A = 'a.example';
const B = 'b.example';

describe('Frontier.next: what starts, on a fake clock', () => {
  test('nothing starts before the host is ready (lease, listing)', () => {
    const { admission, frontier, runner } = frontierRig();
    admission.offer(`http://${A}/1`, A, 0);
    assert.equal(frontier.next(0), undefined);
    assert.deepEqual(runner.started, []);
  });

  test('round robin over ready hosts, within --per-host', () => {
    const { admission, runner, ready } = frontierRig({ perHost: 1 });
    for (let i = 0; i < 3; i++) admission.offer(`http://${A}/${i}`, A, 1);
    for (let i = 0; i < 3; i++) admission.offer(`http://${B}/${i}`, B, 1);
    ready(A);
    ready(B);
    assert.deepEqual(runner.started, [`http://${A}/0`, `http://${B}/0`], 'one each: --per-host 1');
  });

  test('stops when the runner has no room', () => {
    const { admission, frontier, runner, ready } = frontierRig({ perHost: 8 });
    runner.room = 2;
    for (let i = 0; i < 5; i++) admission.offer(`http://${A}/${i}`, A, 1);
    ready(A);
    assert.equal(runner.started.length, 2);
    assert.equal(frontier.queued, 3);
  });

  test('a host whose robots.txt is loading is not asked for it again (no busy loop)', () => {
    const { admission, frontier, runner } = frontierRig();
    admission.offer(`http://${A}/1`, A, 0);
    const host = frontier.hosts.get(A)!;
    host.moveTo('ready');
    frontier.schedule(host);
    assert.deepEqual(runner.robots, [A]);
    host.robotsStarted();
    for (let i = 0; i < 5; i++) frontier.schedule(host);
    assert.deepEqual(runner.robots, [A], 'asked once while loading');
    assert.deepEqual(runner.started, []);
    host.robotsKnown({ isAllowed: () => true, crawlDelaySeconds: undefined, source: 'none' });
    frontier.schedule(host);
    assert.deepEqual(runner.started, [`http://${A}/1`]);
  });

  test('robots.txt that must wait is asked for again at its time', () => {
    const { admission, frontier, runner, clock } = frontierRig();
    admission.offer(`http://${A}/1`, A, 0);
    const host = frontier.hosts.get(A)!;
    host.moveTo('ready');
    host.robotsRetryLater(clock.monotonic() + 5_000);
    frontier.schedule(host);
    assert.deepEqual(runner.robots, []);
    clock.advance(4_999);
    assert.deepEqual(runner.robots, []);
    clock.advance(1);
    assert.deepEqual(runner.robots, [A]);
  });

  test('a host paused by politeness is woken at its time', () => {
    const { admission, frontier, runner, ready, clock } = frontierRig({ delayMs: 30, perHost: 4 });
    admission.offer(`http://${A}/1`, A, 0);
    admission.offer(`http://${A}/2`, A, 0);
    ready(A);
    assert.deepEqual(runner.started, [`http://${A}/1`], 'the second waits for --delay');
    clock.advance(29);
    assert.deepEqual(runner.started, [`http://${A}/1`]);
    clock.advance(1);
    assert.deepEqual(runner.started, [`http://${A}/1`, `http://${A}/2`]);
    frontier.close();
    assert.equal(clock.pending, 0, 'close stops every timer');
  });
});

describe('Frontier retries and hosts let go', () => {
  test('a retry is queued again at its time and wakes the loop', () => {
    const { admission, frontier, runner, clock, ready } = frontierRig();
    admission.offer(`http://${A}/1`, A, 0);
    const host = ready(A);
    runner.started = [];
    frontier.addRetry(host, { url: `http://${A}/flaky`, key: 'k1', depth: 1 }, clock.monotonic() + 20);
    assert.equal(frontier.nextRetryAt(), clock.monotonic() + 20);
    assert.equal(host.isClaimed('k1'), true);
    clock.advance(19);
    assert.deepEqual(runner.started, []);
    clock.advance(1);
    assert.deepEqual(runner.started, [`http://${A}/flaky`]);
    assert.ok(runner.wakes > 0);
    frontier.close();
  });

  test('dropHost empties queue and retries and gives them back', () => {
    const { admission, frontier, clock } = frontierRig();
    admission.offer(`http://${A}/1`, A, 0);
    admission.offer(`http://${A}/2`, A, 0);
    const host = frontier.hosts.get(A)!;
    frontier.addRetry(host, { url: `http://${A}/r`, key: 'kr', depth: 1 }, clock.monotonic() + 10_000);
    const dropped = frontier.dropHost(host);
    assert.deepEqual(dropped.map((i) => i.url).sort(), [`http://${A}/1`, `http://${A}/2`, `http://${A}/r`]);
    assert.equal(frontier.queued, 0);
    for (const item of dropped) assert.equal(host.isClaimed(item.key), false);
    assert.equal(frontier.nextRetryAt(), Infinity);
    assert.equal(clock.pending, 0);
  });

  test('hostFor makes a host once (the frontier holds it); forget lets it go', () => {
    const { frontier } = frontierRig();
    const made = frontier.hostFor(A, `http://${A}/x`);
    assert.equal(made.created, true);
    assert.equal(made.host.origin, `http://${A}`);
    assert.deepEqual(frontier.hostFor(A, undefined), { host: made.host, created: false });
    assert.equal(frontier.hosts.get(A), made.host);
    frontier.forget(A);
    assert.equal(frontier.hosts.has(A), false);
  });
});

describe('Frontier spill: queues beyond --frontier-memory', () => {
  /** 600 URLs of host A, breadth first: depth 1 to 6, a hundred each, in that order. */
  const offers = Array.from({ length: 600 }, (_, i) => ({ url: `http://${A}/${i}`, depth: 1 + Math.floor(i / 100) }));

  test('a spilled queue starts its URLs in the order the queue in memory does', async () => {
    const orders: string[][] = [];
    for (const spill of [undefined, new SpillRoom(await spillDirs())]) {
      const { admission, frontier, runner, ready } = frontierRig({ perHost: 10_000, frontierMemory: 10 }, spill ? { spill } : {});
      for (const o of offers) assert.equal(admission.offer(o.url, A, o.depth), 'queued');
      assert.equal(frontier.queued, 600);
      if (spill) {
        assert.equal(frontier.inMemory, 10, 'the budget, the head of the queue');
        assert.equal(frontier.hosts.get(A)!.spilled, 590);
        assert.equal(spill.openFiles, 1);
      }
      ready(A);
      assert.equal(frontier.queued, 0);
      assert.equal(frontier.inMemory, 0);
      orders.push(runner.started);
      frontier.close();
      if (spill) assert.equal(spill.openFiles, 0, 'close removes the spill files');
    }
    assert.equal(orders[0]!.length, 600);
    assert.deepEqual(orders[1], orders[0]);
  });

  test('a URL in the spill file is claimed: offered again it is known, not queued twice', async () => {
    const { admission, frontier } = frontierRig({ frontierMemory: 10 }, { spill: new SpillRoom(await spillDirs()) });
    for (const o of offers.slice(0, 50)) admission.offer(o.url, A, o.depth);
    assert.equal(frontier.hosts.get(A)!.spilled, 40);
    assert.equal(admission.offer(offers[45]!.url, A, 1), 'known');
    assert.equal(admission.offer(offers[5]!.url, A, 1), 'known');
    assert.equal(frontier.queued, 50);
    frontier.close();
  });

  test('dropHost and filterQueue read the spill file back, in order; forget removes it', async () => {
    const room = new SpillRoom(await spillDirs());
    const { admission, frontier } = frontierRig({ frontierMemory: 10 }, { spill: room });
    for (const o of offers.slice(0, 300)) admission.offer(o.url, A, o.depth);
    const host = frontier.hosts.get(A)!;
    const dropped = frontier.filterQueue(host, (i) => Number(i.url.split('/').pop()) % 2 === 0);
    assert.equal(dropped.length, 150);
    assert.equal(frontier.queued, 150);
    for (const i of dropped) assert.equal(host.isClaimed(i.key), false, 'a dropped URL is no longer claimed');
    assert.ok(host.spilled > 0, 'what is kept stays spilled');
    const all = frontier.dropHost(host);
    assert.deepEqual(
      all.map((i) => i.url),
      offers
        .slice(0, 300)
        .filter((_, i) => i % 2 === 0)
        .map((o) => o.url),
    );
    assert.equal(frontier.queued, 0);
    assert.equal(frontier.inMemory, 0);
    assert.equal(room.openFiles, 0);
    for (const o of offers.slice(0, 5)) admission.offer(o.url, A, o.depth);
    admission.offer(`http://${B}/x`, B, 1);
    for (const o of offers.slice(5, 100)) admission.offer(o.url, A, o.depth);
    assert.equal(room.openFiles, 1);
    frontier.forget(A);
    assert.equal(room.openFiles, 0, 'a host forgotten has its spill file removed');
    frontier.close();
  });

  test('memory holds at most --frontier-memory URLs plus a head per host', async () => {
    const { admission, frontier } = frontierRig({ frontierMemory: 100 }, { spill: new SpillRoom(await spillDirs()), scope: 'any' });
    for (let h = 0; h < 10; h++) for (let i = 0; i < 1_000; i++) admission.offer(`http://h${h}.example/${i}`, `h${h}.example`, 1);
    assert.equal(frontier.queued, 10_000);
    assert.ok(frontier.inMemory <= 100 + 10 * SPILL_HEAD, `${frontier.inMemory} in memory`);
    frontier.close();
  });
});
