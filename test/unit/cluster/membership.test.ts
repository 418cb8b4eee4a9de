import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { bootId } from '../../../src/cluster/local-liveness.js';
import { Membership } from '../../../src/cluster/membership.js';
import type { NodeRecord } from '../../../src/cluster/node-record.js';
import { Layout } from '../../../src/store/layout.js';
import { tempOwner } from '../../../src/store/temp-names.js';
import { FakeClock } from '../../support/fake-clock.js';
import { hookFsPromises } from '../../support/fs-hook.js';
import { remoteRecord, writeRecord } from '../../support/node-records.js';
import { freshPaths } from '../../support/temp-paths.js';
import { exitedPid } from '../../support/processes.js';

const SELF = 'node-a';
const PEER = 'node-b';
const OTHER = 'node-c';
const DEAD = 15_000;
const HEARTBEAT = 1_000;

const freshPath = freshPaths('mountcrawl-membership-');

/** A fresh data directory with an empty nodes/. */
async function freshLayout(): Promise<Layout> {
  const layout = new Layout(freshPath());
  await mkdir(layout.dir('nodes'), { recursive: true });
  return layout;
}

function setup(layout: Layout, clock = new FakeClock()): { clock: FakeClock; m: Membership } {
  return { clock, m: new Membership(layout, { nodeId: SELF, heartbeatMs: HEARTBEAT, deadAfterMs: DEAD }, { clock }) };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

describe('Membership: liveness of another machine by its counter', () => {
  test('a peer is alive while its counter changes, and dead after deadAfterMs without a change', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 1));
    assert.equal(await m.observe(), true, 'a new live peer changes the live set');
    assert.deepEqual(m.liveIds(), [SELF, PEER].sort());
    // Far longer than deadAfter in all, but the counter moves within every deadAfter.
    for (let c = 2; c <= 5; c++) {
      clock.advance(DEAD - 1);
      await writeRecord(layout, remoteRecord(PEER, c));
      assert.equal(await m.observe(), false);
      assert.equal(m.isAlive(PEER), true, `alive at counter ${c}`);
    }
    // Now the counter stops.
    clock.advance(DEAD - 1);
    assert.equal(await m.observe(), false);
    assert.equal(m.isAlive(PEER), true, 'one ms short of deadAfter: still alive');
    assert.deepEqual(
      m.livePeers().map((r) => r.counter),
      [5],
    );
    clock.advance(1);
    assert.equal(await m.observe(), true, 'the death changes the live set');
    assert.deepEqual(m.liveIds(), [SELF]);
    assert.equal(m.isGone(PEER), true);
    assert.equal(m.isAlive(PEER), false);
    assert.deepEqual(m.livePeers(), []);
    assert.ok(await exists(layout.node(PEER)), 'the record stays until twice deadAfter');
  });

  test('a dead peer whose counter moves again is alive again', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 1));
    await m.observe();
    clock.advance(DEAD);
    await m.observe();
    assert.equal(m.isGone(PEER), true);
    clock.advance(1_000);
    await writeRecord(layout, remoteRecord(PEER, 2));
    assert.equal(await m.observe(), true);
    assert.equal(m.isAlive(PEER), true);
    assert.deepEqual(m.liveIds(), [SELF, PEER].sort());
  });

  test("the record of a peer dead for twice deadAfterMs is removed with its temp files; others' files stay", async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    const nodes = layout.dir('nodes');
    // Names as a killed earlier process left them (its own random process tag).
    const deadTemp = `.${PEER}.json~${PEER}~zz0007.tmp`;
    const liveTemp = `.${OTHER}.json~${OTHER}~zz0003.tmp`;
    assert.equal(tempOwner(deadTemp), PEER);
    await writeFile(join(nodes, deadTemp), '{"id":"node-b","coun');
    await writeFile(join(nodes, liveTemp), '{"id":"node-c","coun');
    let c = 1;
    await writeRecord(layout, remoteRecord(PEER, 1));
    await writeRecord(layout, remoteRecord(OTHER, c++));
    await m.observe();
    // node-c keeps beating; node-b stopped at its first record.
    for (let t = 0; t < 2 * DEAD; t += 5_000) {
      clock.advance(5_000);
      await writeRecord(layout, remoteRecord(OTHER, c++));
      await m.observe();
    }
    assert.equal(m.isGone(PEER), true);
    assert.ok(await exists(layout.node(PEER)), 'at exactly twice deadAfter the record is still there');
    assert.ok(await exists(join(nodes, deadTemp)));
    clock.advance(1);
    await writeRecord(layout, remoteRecord(OTHER, c++));
    await m.observe();
    const left = (await readdir(nodes)).sort();
    assert.deepEqual(left, [liveTemp, `${OTHER}.json`].sort(), 'node-b record and temp gone, node-c files kept');
    assert.deepEqual(m.liveIds(), [SELF, OTHER].sort());
  });

  test('a temp file the dead peer made after the listing of the observation that removes its record goes too', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    const nodes = layout.dir('nodes');
    const lateTemp = `.${PEER}.json~${PEER}~zz0009.tmp`;
    await writeRecord(layout, remoteRecord(PEER, 1));
    await m.observe();
    clock.advance(2 * DEAD + 1);
    // The peer (killed while writing) made its temp file just after this observation listed nodes/.
    let armed = true;
    const restore = hookFsPromises<(...a: unknown[]) => Promise<string[]>>('readdir', (original) => async (...a) => {
      const listing = await original(...a);
      if (armed) {
        armed = false;
        await writeFile(join(nodes, lateTemp), '{"id":"node-b","coun');
      }
      return listing;
    });
    try {
      await m.observe();
    } finally {
      restore();
    }
    assert.equal(m.isGone(PEER), true);
    assert.deepEqual(await readdir(nodes), [], 'the record and the late temp file are gone');
  });

  test('this node paused during an observation: a peer whose record did not change in its reads is not counted dead, nor its record removed', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    const nodes = layout.dir('nodes');
    await writeRecord(layout, remoteRecord(PEER, 1));
    await m.observe();
    clock.advance(DEAD / 2);
    // The reads are made, then this process stops for three times dead-after before it goes on.
    let armed = true;
    const restore = hookFsPromises<(...a: unknown[]) => Promise<string[]>>('readdir', (original) => async (...a) => {
      const listing = await original(...a);
      if (armed) {
        armed = false;
        clock.advance(3 * DEAD);
      }
      return listing;
    });
    try {
      assert.equal(await m.observe(), false, 'the live set did not change');
    } finally {
      restore();
    }
    assert.deepEqual(m.liveIds(), [SELF, PEER].sort());
    assert.deepEqual(await readdir(nodes), [`${PEER}.json`], 'its record stays');
    // Read again, unchanged: now its silence is real.
    assert.equal(await m.observe(), true);
    assert.deepEqual(m.liveIds(), [SELF]);
    assert.equal(m.isGone(PEER), true);
  });

  test('cameBack: a peer whose record changed since the last observe (another counter or process) came back; unchanged, done, stopping or absent, not', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 1));
    await m.observe();
    clock.advance(DEAD + 1);
    await m.observe();
    assert.equal(m.isGone(PEER), true, 'counted dead by this view');
    assert.equal(await m.cameBack(PEER), false, 'its record as seen');
    await writeRecord(layout, remoteRecord(PEER, 2));
    assert.equal(await m.cameBack(PEER), true, 'it wrote since');
    await writeRecord(layout, remoteRecord(PEER, 3, { state: 'done' }));
    assert.equal(await m.cameBack(PEER), false, 'done');
    await writeRecord(layout, remoteRecord(OTHER, 1));
    assert.equal(await m.cameBack(OTHER), true, 'a record that appeared since the last observe');
    assert.equal(await m.cameBack('node-z'), false, 'no record');
  });

  test('a peer first seen in state stopping is dead at once', async () => {
    const layout = await freshLayout();
    const { m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 9, { state: 'stopping' }));
    assert.equal(await m.observe(), false);
    assert.equal(m.isGone(PEER), true);
    assert.deepEqual(m.liveIds(), [SELF]);
  });

  test('a peer whose record is removed (graceful leave) leaves the live set at the next observe', async () => {
    const layout = await freshLayout();
    const { m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 1));
    await m.observe();
    assert.deepEqual(m.liveIds(), [SELF, PEER].sort());
    await rm(layout.node(PEER));
    assert.equal(await m.observe(), true);
    assert.deepEqual(m.liveIds(), [SELF]);
  });

  test('observe ignores its own record, hidden temp files, other names and unreadable records', async () => {
    const layout = await freshLayout();
    const { m } = setup(layout);
    const nodes = layout.dir('nodes');
    await writeRecord(layout, remoteRecord(SELF, 1));
    await writeFile(join(nodes, `.${OTHER}.json~${OTHER}~zz0001.tmp`), JSON.stringify(remoteRecord(OTHER, 1)));
    await writeFile(join(nodes, '.hidden.json'), JSON.stringify(remoteRecord('hidden', 1)));
    await writeFile(join(nodes, 'notes.txt'), 'x');
    await writeFile(join(nodes, 'broken.json'), '{"id": "broken", "coun');
    await writeFile(join(nodes, 'notarecord.json'), '{"hello": 1}');
    assert.equal(m.observations, 0);
    assert.equal(await m.observe(), false);
    assert.equal(m.observations, 1);
    assert.deepEqual(m.liveIds(), [SELF]);
    assert.deepEqual(m.livePeers(), []);
  });
});

describe('Membership: the same-machine shortcut', () => {
  test('a record of this machine (hostname + boot id) whose pid does not run is dead at once and removed', async (t) => {
    if (bootId() === '') return t.skip('no /proc boot id on this system');
    const layout = await freshLayout();
    const { m } = setup(layout);
    const pid = await exitedPid();
    await writeRecord(layout, remoteRecord(PEER, 1, { hostname: hostname(), bootId: bootId(), pid }));
    assert.equal(await m.observe(), false, 'never counted alive');
    assert.deepEqual(m.liveIds(), [SELF]);
    assert.deepEqual(m.livePeers(), []);
    assert.equal(await exists(layout.node(PEER)), false, 'its record is removed at the first observe');
  });

  test('a dead local node stays gone after its record was removed (isGone true at once)', async (t) => {
    if (bootId() === '') return t.skip('no /proc boot id on this system');
    const layout = await freshLayout();
    const { m } = setup(layout);
    const pid = await exitedPid();
    await writeRecord(layout, remoteRecord(PEER, 1, { hostname: hostname(), bootId: bootId(), pid }));
    await m.observe();
    assert.equal(m.isGone(PEER), true, 'its temp files must be removable by a new owner at once');
  });

  test('a peer dead for twice deadAfter stays gone after its record was removed', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 1));
    await m.observe();
    clock.advance(2 * DEAD + 1);
    await m.observe();
    assert.equal(await exists(layout.node(PEER)), false);
    assert.equal(m.isGone(PEER), true);
  });

  test('a record of this machine whose pid runs is judged by its counter', async (t) => {
    if (bootId() === '') return t.skip('no /proc boot id on this system');
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    // The parent of this test process runs; it is not this process (which is never judged dead).
    await writeRecord(layout, remoteRecord(PEER, 1, { hostname: hostname(), bootId: bootId(), pid: process.ppid }));
    await m.observe();
    assert.equal(m.isAlive(PEER), true);
    clock.advance(DEAD);
    await m.observe();
    assert.equal(m.isGone(PEER), true);
  });

  test('a record with this pid and boot id but another hostname is judged by its counter', async () => {
    const layout = await freshLayout();
    const { m } = setup(layout);
    const pid = await exitedPid();
    await writeRecord(layout, remoteRecord(PEER, 1, { hostname: `not-${hostname()}`, bootId: bootId(), pid }));
    await m.observe();
    assert.equal(m.isAlive(PEER), true);
  });
});

describe('Membership: ids never seen', () => {
  test('an id with no record counts alive for deadAfterMs from the first time it is asked about', () => {
    const clock = new FakeClock();
    const m = new Membership(new Layout(freshPath()), { nodeId: SELF, heartbeatMs: HEARTBEAT, deadAfterMs: DEAD }, { clock });
    clock.advance(60_000); // time before the first question does not count
    assert.equal(m.isGone('ghost'), false);
    clock.advance(DEAD - 1);
    assert.equal(m.isGone('ghost'), false);
    assert.equal(m.isAlive('ghost'), true);
    assert.equal(m.isGone('late-ghost'), false, 'another id has its own first question');
    clock.advance(1);
    assert.equal(m.isGone('ghost'), true);
    assert.equal(m.isAlive('ghost'), false);
    assert.equal(m.isGone('late-ghost'), false);
    clock.advance(DEAD);
    assert.equal(m.isGone('late-ghost'), true);
  });

  test('this node itself is never gone', () => {
    const clock = new FakeClock();
    const m = new Membership(new Layout(freshPath()), { nodeId: SELF, heartbeatMs: HEARTBEAT, deadAfterMs: DEAD }, { clock });
    assert.equal(m.isAlive(SELF), true);
    clock.advance(10 * DEAD);
    assert.equal(m.isGone(SELF), false);
    assert.deepEqual(m.liveIds(), [SELF]);
  });
});

describe('Membership: allIdleSince', () => {
  test('undefined unless every live node, this one included, is idle; resets when a peer starts a new idle epoch', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    assert.equal(m.allIdleSince(), undefined, 'this node is not idle yet');
    const t0 = clock.monotonic();
    m.setState('idle');
    assert.equal(m.allIdleSince(), t0, 'alone and idle');

    let c = 1;
    clock.advance(1_000);
    await writeRecord(layout, remoteRecord(PEER, c++, { state: 'crawling' }));
    await m.observe();
    assert.equal(m.allIdleSince(), undefined, 'a live peer is crawling');

    clock.advance(1_000);
    const peerIdleAt = clock.monotonic();
    await writeRecord(layout, remoteRecord(PEER, c++, { state: 'idle', idleEpoch: 1 }));
    await m.observe();
    assert.equal(m.allIdleSince(), peerIdleAt, 'the later of the two idle times');

    clock.advance(1_000);
    await writeRecord(layout, remoteRecord(PEER, c++, { state: 'idle', idleEpoch: 1 }));
    await m.observe();
    assert.equal(m.allIdleSince(), peerIdleAt, 'same idle epoch: unchanged');

    // The peer was busy between two of our reads: its idle epoch moved on.
    clock.advance(1_000);
    const newEpochAt = clock.monotonic();
    await writeRecord(layout, remoteRecord(PEER, c++, { state: 'idle', idleEpoch: 2 }));
    await m.observe();
    assert.equal(m.allIdleSince(), newEpochAt, 'a new idle epoch restarts the idle time');

    // This node gets work, then is idle again.
    clock.advance(1_000);
    m.setState('crawling');
    assert.equal(m.allIdleSince(), undefined);
    clock.advance(1_000);
    const selfAgain = clock.monotonic();
    m.setState('idle');
    m.setState('idle'); // staying idle does not restart it
    clock.advance(1_000);
    m.setState('idle');
    assert.equal(m.allIdleSince(), selfAgain);
  });

  test('a peer seen idle at first sight counts idle from that observation', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    m.setState('idle');
    clock.advance(500);
    const seenAt = clock.monotonic();
    await writeRecord(layout, remoteRecord(PEER, 1, { state: 'idle', idleEpoch: 4 }));
    await m.observe();
    assert.equal(m.allIdleSince(), seenAt);
  });

  test('dead peers do not count', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 1, { state: 'crawling' }));
    await m.observe();
    const idleAt = clock.monotonic();
    m.setState('idle');
    assert.equal(m.allIdleSince(), undefined);
    clock.advance(DEAD);
    await m.observe();
    assert.equal(m.isGone(PEER), true);
    assert.equal(m.allIdleSince(), idleAt);
  });
});

describe('Membership: peersWroteAfter (the end rule)', () => {
  test("is when the read that still saw each live peer's previous record began: a peer seen once proves nothing, a dead one does not count", async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    assert.equal(m.peersWroteAfter(), Infinity, 'no live peer');
    await writeRecord(layout, remoteRecord(PEER, 1, { state: 'idle', idleEpoch: 1 }));
    await m.observe();
    assert.equal(m.peersWroteAfter(), -Infinity, 'its one record may have been written long ago');
    clock.advance(1_000);
    const readOld = clock.monotonic();
    await m.observe();
    assert.equal(m.peersWroteAfter(), -Infinity, 'the same record again');
    clock.advance(1_000);
    await writeRecord(layout, remoteRecord(PEER, 2, { state: 'idle', idleEpoch: 1 }));
    await m.observe();
    assert.equal(m.peersWroteAfter(), readOld, 'written after the read that still saw counter 1 began');
    clock.advance(1_000);
    await writeRecord(layout, remoteRecord(OTHER, 1, { state: 'idle', idleEpoch: 1 }));
    await m.observe();
    assert.equal(m.peersWroteAfter(), -Infinity, 'a peer seen once: the earliest counts');
    // PEER beats on, OTHER was killed: once it is dead only PEER counts.
    for (let c = 3; m.isAlive(OTHER); c++) {
      clock.advance(DEAD / 3);
      await writeRecord(layout, remoteRecord(PEER, c, { state: 'idle', idleEpoch: 1 }));
      await m.observe();
    }
    assert.equal(m.peersWroteAfter(), clock.monotonic() - DEAD / 3);
  });
});

describe('Membership: the last busy peer (the end, sooner)', () => {
  test('are the live peers not idle while this node is idle, up to a number; none when this node works or more peers do', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 1, { state: 'crawling' }));
    await writeRecord(layout, remoteRecord(OTHER, 1, { state: 'crawling' }));
    await m.observe();
    assert.equal(m.lastBusyPeers(2), undefined, 'this node is not idle');
    m.setState('idle');
    assert.deepEqual(m.lastBusyPeers(2)?.sort(), [PEER, OTHER].sort());
    assert.equal(m.lastBusyPeers(1), undefined, 'more peers at work than asked for');
    clock.advance(1_000);
    await writeRecord(layout, remoteRecord(OTHER, 2, { state: 'idle', idleEpoch: 1 }));
    await writeRecord(layout, remoteRecord(PEER, 2, { state: 'crawling' }));
    await m.observe();
    assert.deepEqual(m.lastBusyPeers(1), [PEER]);
    clock.advance(DEAD);
    await writeRecord(layout, remoteRecord(OTHER, 3, { state: 'idle', idleEpoch: 1 }));
    await m.observe();
    assert.equal(m.isGone(PEER), true);
    assert.equal(m.lastBusyPeers(1), undefined, 'a dead peer is not waited for, and an idle one is not');
  });

  test('peerStateMoved reads the one record: idle, a new idle epoch, done or removed count; a new counter does not', async () => {
    const layout = await freshLayout();
    const { m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 1, { state: 'crawling' }));
    await m.observe();
    await writeRecord(layout, remoteRecord(PEER, 2, { state: 'crawling', pages: 9 }));
    assert.equal(await m.peerStateMoved(PEER), false, 'still crawling');
    await writeRecord(layout, remoteRecord(PEER, 3, { state: 'idle', idleEpoch: 1 }));
    assert.equal(await m.peerStateMoved(PEER), true, 'idle now');
    await writeRecord(layout, remoteRecord(PEER, 4, { state: 'done', idleEpoch: 1 }));
    assert.equal(await m.peerStateMoved(PEER), true, 'done');
    await rm(layout.node(PEER));
    assert.equal(await m.peerStateMoved(PEER), true, 'removed');
    assert.equal(await m.peerStateMoved('never-seen'), true, 'unknown');
    // It only reads: the next observe does the bookkeeping.
    assert.equal(m.liveIds().includes(PEER), true);

    await writeRecord(layout, remoteRecord(OTHER, 1, { state: 'idle', idleEpoch: 3 }));
    await m.observe();
    await writeRecord(layout, remoteRecord(OTHER, 2, { state: 'idle', idleEpoch: 4 }));
    assert.equal(await m.peerStateMoved(OTHER), true, 'busy and idle again between two reads');
  });

  test('peerStateMoved throws a read that fails otherwise (the heartbeat looks again)', async () => {
    const layout = await freshLayout();
    const { m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 1, { state: 'crawling' }));
    await m.observe();
    await rm(layout.node(PEER));
    await mkdir(layout.node(PEER));
    await assert.rejects(m.peerStateMoved(PEER), { code: 'EISDIR' });
  });
});

describe('Membership: which process runs a node id', () => {
  test("replaced: true only when the id's record, read now, names another process than the one given, and the last observe did too", async () => {
    const layout = await freshLayout();
    const { m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 1, { incarnation: 'first' }));
    await m.observe();
    assert.equal(await m.replaced(PEER, 'first'), false, 'the process seen runs it');
    await writeRecord(layout, remoteRecord(PEER, 1, { incarnation: 'second' }));
    assert.equal(await m.replaced(PEER, 'second'), false, 'the process that runs it now, not yet observed');
    assert.equal(await m.replaced(PEER, 'first'), false, 'the process last observed: taken as running until an observe says otherwise');
    await m.observe();
    assert.equal(await m.replaced(PEER, 'first'), true, 'an earlier process: the id runs again in another');
    await writeRecord(layout, remoteRecord(OTHER, 1));
    assert.equal(await m.replaced(OTHER, 'first'), false, 'a record of an older version names no process');
    assert.equal(await m.replaced('never-seen', 'first'), false, 'no record: the other rules decide');
  });

  test('a live peer whose record names another process than before left lost and is live again: the change is told once', async () => {
    const layout = await freshLayout();
    const { m } = setup(layout);
    await writeRecord(layout, remoteRecord(PEER, 7, { incarnation: 'first' }));
    await m.observe();
    m.takeDepartures();
    await writeRecord(layout, remoteRecord(PEER, 1, { incarnation: 'second' }));
    assert.equal(await m.observe(), true, 'its earlier process is gone, with what it held in memory');
    assert.deepEqual(m.liveIds(), [SELF, PEER].sort());
    assert.deepEqual(m.takeDepartures(), { done: [], lost: [PEER] });
    assert.deepEqual(m.departedIds(), [PEER]);
    await writeRecord(layout, remoteRecord(PEER, 2, { incarnation: 'second' }));
    assert.equal(await m.observe(), false);
    assert.deepEqual(m.takeDepartures(), { done: [], lost: [] });
  });

  test('beat names this process, the same at every beat and another in another Membership of the same id', async () => {
    const layout = await freshLayout();
    const { m } = setup(layout);
    const status = { state: 'crawling', round: 0, hostsOwned: 0, pages: 0, errors: 0, queued: 0, inFlight: 0, rate: 0 } as const;
    await m.beat(status);
    await m.beat(status);
    const record = JSON.parse(await readFile(layout.node(SELF), 'utf8')) as NodeRecord;
    assert.equal(record.incarnation, m.incarnation);
    assert.notEqual(setup(layout).m.incarnation, m.incarnation);
  });
});

describe('Membership: beat and leave', () => {
  test('a record that goes out more than half of dead-after after the one before it is a silence, said once when it is written (the node then asks for a full reseed)', async () => {
    const layout = await freshLayout();
    const clock = new FakeClock();
    let silences = 0;
    const m = new Membership(layout, { nodeId: SELF, heartbeatMs: HEARTBEAT, deadAfterMs: DEAD }, { clock, onSilence: () => silences++ });
    const status = { state: 'crawling', round: 1, hostsOwned: 0, pages: 0, errors: 0, queued: 0, inFlight: 0, rate: 0 } as const;
    await m.beat(status);
    clock.advance(DEAD / 2);
    await m.beat(status);
    assert.equal(silences, 0, 'half of dead-after: others still count it alive');
    clock.advance(DEAD / 2 + 1);
    await m.beat(status);
    assert.equal(silences, 1);
    clock.advance(HEARTBEAT);
    await m.beat(status);
    assert.equal(silences, 1, 'once: the next record is on time');
  });

  test('beat writes a record another node reads, with a counter that grows; leave removes it', async () => {
    const layout = await freshLayout();
    const { clock, m } = setup(layout);
    const status = { state: 'crawling', round: 2, hostsOwned: 3, pages: 40, errors: 1, queued: 7, inFlight: 2, rate: 1.5 } as const;
    assert.equal(m.serverTime, undefined);
    await m.beat(status);
    const first = JSON.parse(await readFile(layout.node(SELF), 'utf8')) as NodeRecord;
    assert.equal(first.id, SELF);
    assert.equal(first.counter, 1);
    assert.equal(first.state, 'crawling');
    assert.equal(first.idleEpoch, 0);
    assert.equal(first.pid, process.pid);
    assert.equal(first.hostname, hostname());
    assert.equal(first.bootId, bootId());
    assert.equal(first.heartbeatMs, HEARTBEAT);
    assert.equal(first.pages, 40);
    assert.equal(first.updatedAt, new Date(clock.now()).toISOString());
    const s = await stat(layout.node(SELF));
    assert.deepEqual(m.serverTime, { mtimeMs: s.mtimeMs, at: clock.monotonic() });
    assert.equal(m.lastBeatOk, clock.monotonic());

    clock.advance(HEARTBEAT);
    await m.beat({ ...status, state: 'idle' });
    clock.advance(HEARTBEAT);
    await m.beat({ ...status, state: 'crawling' });
    clock.advance(HEARTBEAT);
    await m.beat({ ...status, state: 'idle' });
    const fourth = JSON.parse(await readFile(layout.node(SELF), 'utf8')) as NodeRecord;
    assert.equal(fourth.counter, 4);
    assert.equal(fourth.state, 'idle');
    assert.equal(fourth.idleEpoch, 2, 'each time it becomes idle is a new idle epoch');
    assert.deepEqual(await readdir(layout.dir('nodes')), [`${SELF}.json`], 'no temp file left');

    // Another node sees it, then sees it leave.
    const otherClock = new FakeClock();
    const other = new Membership(layout, { nodeId: PEER, heartbeatMs: HEARTBEAT, deadAfterMs: DEAD }, { clock: otherClock });
    await other.observe();
    assert.deepEqual(other.liveIds(), [SELF, PEER].sort());
    await m.leave();
    assert.equal(await exists(layout.node(SELF)), false);
    assert.equal(await other.observe(), true);
    assert.deepEqual(other.liveIds(), [PEER]);
    await m.leave(); // leaving twice is harmless
  });

  test('beat throws what the file system throws (nodes/ missing)', async () => {
    const layout = new Layout(freshPath());
    const { m } = setup(layout);
    await assert.rejects(m.beat({ state: 'crawling', round: 0, hostsOwned: 0, pages: 0, errors: 0, queued: 0, inFlight: 0, rate: 0 }), {
      code: 'ENOENT',
    });
  });
});

describe('Membership: a node that left stays gone', () => {
  test('a beat after leave() writes no record (one left behind would read as a dead node)', async () => {
    const layout = await freshLayout();
    const { m } = setup(layout);
    const status = { state: 'stopping', round: 0, hostsOwned: 0, pages: 0, errors: 0, queued: 0, inFlight: 0, rate: 0 } as const;
    await m.beat(status);
    assert.equal(await exists(layout.node(SELF)), true);
    await m.leave();
    await m.beat(status);
    assert.equal(await exists(layout.node(SELF)), false);
    assert.deepEqual(await readdir(layout.dir('nodes')), []);
  });
});
