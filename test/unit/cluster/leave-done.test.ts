import assert from 'node:assert/strict';
import { mkdir, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { describe, test } from 'node:test';
import { DoneLeavers } from '../../../src/cluster/done-leavers.js';
import { bootId } from '../../../src/cluster/local-liveness.js';
import { Membership } from '../../../src/cluster/membership.js';
import type { NodeRecord } from '../../../src/cluster/node-record.js';
import { candidate, ownerOf } from '../../../src/cluster/rendezvous.js';
import { peersStill } from '../../../src/crawl/termination.js';
import { Layout } from '../../../src/store/layout.js';
import { FakeClock } from '../../support/fake-clock.js';
import { remoteRecord, writeRecord } from '../../support/node-records.js';
import { freshPaths } from '../../support/temp-paths.js';
import { exitedPid } from '../../support/processes.js';

const SELF = 'node-a';
const PEER = 'node-b';
const OTHER = 'node-c';
const DEAD = 15_000;

const freshPath = freshPaths('mountcrawl-leave-done-');

async function setup(): Promise<{ layout: Layout; clock: FakeClock; m: Membership }> {
  const layout = new Layout(freshPath());
  await mkdir(layout.dir('nodes'), { recursive: true });
  const clock = new FakeClock();
  return { layout, clock, m: new Membership(layout, { nodeId: SELF, heartbeatMs: 1_000, deadAfterMs: DEAD }, { clock }) };
}

/** A peer's record: idle in epoch 1, round 1, unless `extra` says otherwise. */
const record = (id: string, counter: number, extra: Partial<NodeRecord> = {}): NodeRecord =>
  remoteRecord(id, counter, { state: 'idle', idleEpoch: 1, round: 1, ...extra });

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

describe('Leaving done (docs/protocol.md, "Leaving done"): what a node sees', () => {
  test('a peer whose last record says done leaves the live set as done, and its inbox is to be read', async () => {
    const { layout, m } = await setup();
    await writeRecord(layout, record(PEER, 1));
    await writeRecord(layout, record(OTHER, 1));
    await m.observe();
    assert.deepEqual(m.liveIds(), [SELF, PEER, OTHER].sort());
    m.takeDepartures();
    await writeRecord(layout, record(PEER, 2, { state: 'done' }));
    assert.equal(await m.observe(), true);
    assert.deepEqual(m.liveIds(), [SELF, OTHER].sort());
    assert.deepEqual(m.takeDepartures(), { done: [PEER], lost: [] });
    assert.deepEqual(m.doneIds(), [PEER]);
    assert.equal(m.isGone(PEER), true, 'its leases may be taken over at once');
    assert.deepEqual(m.takeDepartures(), { done: [], lost: [] }, 'a departure is told once');
  });

  test('a peer whose record vanished, or that stopped beating while idle, is lost (a full reseed), not done', async () => {
    const { layout, clock, m } = await setup();
    await writeRecord(layout, record(PEER, 1));
    await writeRecord(layout, record(OTHER, 1));
    await m.observe();
    m.takeDepartures();
    await rm(layout.node(PEER)); // removed by someone: it may have died right after its last idle beat
    clock.advance(DEAD); // OTHER's counter did not move: dead
    await m.observe();
    assert.deepEqual(m.takeDepartures(), { done: [], lost: [OTHER, PEER].sort() });
    assert.deepEqual(m.doneIds(), []);
  });

  test('a done record of a process of this machine that has exited is kept (others must see it), then removed after twice dead-after', async (t) => {
    if (bootId() === '') return t.skip('no /proc boot id on this system');
    const { layout, clock, m } = await setup();
    const pid = await exitedPid();
    const local = { hostname: hostname(), bootId: bootId(), pid };
    await writeRecord(layout, record(PEER, 1, { ...local, state: 'done' }));
    await writeRecord(layout, record(OTHER, 1, { ...local, state: 'idle' }));
    await m.observe();
    assert.equal(await exists(layout.node(PEER)), true, 'the done record stays for the other nodes');
    assert.equal(await exists(layout.node(OTHER)), false, 'a dead idle record goes at once, as before');
    assert.deepEqual(m.doneIds(), [PEER]);
    clock.advance(2 * DEAD + 1);
    await m.observe();
    assert.equal(await exists(layout.node(PEER)), false);
    assert.deepEqual(m.doneIds(), [PEER], 'its inbox is still read after its record went');
  });

  test('a node that comes back with the same id is alive again and its inbox is its own', async () => {
    const { layout, m } = await setup();
    await writeRecord(layout, record(PEER, 1, { state: 'done' }));
    await m.observe();
    assert.deepEqual(m.doneIds(), [PEER]);
    await writeRecord(layout, record(PEER, 2, { state: 'starting' }));
    await m.observe();
    assert.deepEqual(m.doneIds(), []);
  });

  test('observe changes the live set all at once, when every record is read: never half way, between two reads', async () => {
    const { layout, m } = await setup();
    const peers = Array.from({ length: 40 }, (_, i) => `peer-${String(i).padStart(2, '0')}`);
    for (const id of peers) await writeRecord(layout, record(id, 1));
    await m.observe();
    const before = m.liveIds().join(' ');
    for (const id of peers) await writeRecord(layout, record(id, 2, { state: 'done' }));
    // The control loop runs between the reads of one observation: what it sees of the live set.
    const seen = new Set<string>();
    let observing = true;
    const watch = (): void => {
      seen.add(m.liveIds().join(' '));
      if (observing) setImmediate(watch);
    };
    setImmediate(watch);
    assert.equal(await m.observe(), true);
    observing = false;
    assert.deepEqual(m.liveIds(), [SELF]);
    // Before the fix each record read was applied as it came in: 40 peers leaving showed
    // as a dozen live sets in between.
    assert.deepEqual(
      [...seen].filter((ids) => ids !== before && ids !== SELF),
      [],
      'no live set half changed',
    );
  });

  test('the last look before ending (peersStill): a peer that ended done or moved since it was last seen stops the end; a peer gone from the live set does not', async () => {
    const { layout, clock, m } = await setup();
    await writeRecord(layout, record(PEER, 1));
    await writeRecord(layout, record(OTHER, 1));
    await m.observe();
    assert.equal(await peersStill(m), true, 'both idle as last seen (a new counter is no change)');
    await writeRecord(layout, record(PEER, 2, { state: 'done' }));
    assert.equal(await peersStill(m), false, 'PEER ended done since: look again before ending');
    await m.observe();
    assert.equal(await peersStill(m), true, 'seen done: no longer a live peer, its inbox is read as an orphan');
    await writeRecord(layout, record(OTHER, 2, { idleEpoch: 2 }));
    assert.equal(await peersStill(m), false, 'OTHER was busy and idle again meanwhile');
    await m.observe();
    await rm(layout.node(OTHER));
    await mkdir(layout.node(OTHER));
    assert.equal(await peersStill(m), false, 'a record that cannot be read counts as moved');
    clock.advance(DEAD);
    await m.observe();
    assert.equal(await peersStill(m), true, 'until its peer counts as dead');
  });

  test('removeDoneRecords removes the done records only', async () => {
    const { layout, m } = await setup();
    await writeRecord(layout, record(PEER, 1, { state: 'done' }));
    await writeRecord(layout, record(OTHER, 1));
    await m.observe();
    await m.removeDoneRecords();
    assert.equal(await exists(layout.node(PEER)), false);
    assert.equal(await exists(layout.node(OTHER)), true);
  });
});

describe('DoneLeavers: hosts gained from a node that left done are quiet', () => {
  const hosts = Array.from({ length: 200 }, (_, i) => `h${i}.example`);
  const before3 = [SELF, PEER, OTHER];

  test('exactly the hosts the done node owned are quiet; forget() (a full reseed) ends it', () => {
    const d = new DoneLeavers();
    d.left(before3, [PEER]);
    const all = before3.map(candidate);
    for (const h of hosts) assert.equal(d.isQuiet(h), ownerOf(h, all) === PEER, h);
    assert.ok(hosts.some((h) => d.isQuiet(h)) && hosts.some((h) => !d.isQuiet(h)));
    d.forget();
    assert.ok(hosts.every((h) => !d.isQuiet(h)));
  });

  test('a host passed from one done node to another stays quiet; a departure with no done node adds nothing', () => {
    const d = new DoneLeavers();
    d.left(before3, [PEER]);
    d.left([SELF, OTHER], [OTHER]);
    d.left([SELF, OTHER], []);
    for (const h of hosts) assert.equal(d.isQuiet(h), ownerOf(h, before3.map(candidate)) !== SELF, h);
  });

  test('a lent host is quiet when its borrower left done, and when its lender did (docs/protocol.md, "Lending hosts")', () => {
    const all = before3.map(candidate);
    const ofSelf = hosts.find((h) => ownerOf(h, all) === SELF)!;
    const ofPeer = hosts.find((h) => ownerOf(h, all) === PEER)!;
    const d = new DoneLeavers();
    // SELF lent ofSelf to PEER, PEER lent ofPeer to OTHER; PEER left done.
    d.left(
      before3,
      [PEER],
      new Map([
        [ofSelf, PEER],
        [ofPeer, OTHER],
      ]),
    );
    assert.equal(d.isQuiet(ofSelf), true, 'the borrower that left held nothing');
    assert.equal(d.isQuiet(ofPeer), true, 'its borrower, still live, sends on its queue');
    const ofOther = hosts.find((h) => ownerOf(h, all) === OTHER)!;
    assert.equal(d.isQuiet(ofOther), false, 'neither its owner nor a borrower left');
  });
});
