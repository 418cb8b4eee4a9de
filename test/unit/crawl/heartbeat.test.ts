import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { describe, test, type TestContext } from 'node:test';
import { Membership } from '../../../src/cluster/membership.js';
import type { NodeRecord } from '../../../src/cluster/node-record.js';
import { Ownership } from '../../../src/cluster/ownership.js';
import { candidate, ownerOf } from '../../../src/cluster/rendezvous.js';
import { END_BEATS, END_WATCH_MAX_MS, END_WATCH_PEERS, Heartbeat, STARTUP_BEATS } from '../../../src/crawl/heartbeat.js';
import type { Parts } from '../../../src/crawl/node-parts.js';
import { silentLogger } from '../../../src/progress/logger.js';
import { CrawlStats } from '../../../src/progress/stats.js';
import { Layout } from '../../../src/store/layout.js';
import { FakeClock } from '../../support/fake-clock.js';
import { frontierConfig } from '../../support/frontier-rig.js';
import { remoteRecord, writeRecord } from '../../support/node-records.js';
import { freshPaths } from '../../support/temp-paths.js';

const SELF = 'node-a';
const PEER = 'node-b';
const HEARTBEAT = 1_000;

const freshPath = freshPaths('mountcrawl-heartbeat-');

const peerRecord = (counter: number, state: NodeRecord['state'], idleEpoch = 0): NodeRecord =>
  remoteRecord(PEER, counter, { state, idleEpoch });

/**
 * A heartbeat over a real Membership in a temp nodes/ and stubs for the parts it does not
 * need here (--partition url: no leases). Counts its beats (the records it wrote).
 */
async function rig(over: { watch?: boolean; queues?: readonly number[] } = {}) {
  const dir = freshPath();
  const layout = new Layout(dir);
  await mkdir(layout.dir('nodes'), { recursive: true });
  const clock = new FakeClock();
  const config = frontierConfig({
    dataDir: dir,
    nodeId: SELF,
    heartbeatMs: HEARTBEAT,
    deadAfterMs: 15 * HEARTBEAT,
    watch: over.watch ?? false,
  });
  const membership = new Membership(layout, { nodeId: SELF, heartbeatMs: HEARTBEAT, deadAfterMs: config.deadAfterMs }, { clock });
  // Counts beats, and the heartbeats and reads under way, so that the fake clock waits for them.
  let beats = 0;
  let ticks = 0;
  let lastTick = -1;
  /** What the node did, in order: `beat`, `lend <host>`, `flush`. */
  const acts: string[] = [];
  let pending = 0;
  const track =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      pending++;
      try {
        return await f(...a);
      } finally {
        pending--;
      }
    };
  const beat = membership.beat.bind(membership);
  membership.beat = track(async (s) => {
    beats++;
    acts.push('beat');
    // A heartbeat that lends writes its record twice: count heartbeats begun, not records.
    if (stats.heartbeats.beats !== lastTick) {
      ticks++;
      lastTick = stats.heartbeats.beats;
    }
    await beat(s);
  });
  membership.peerStateMoved = track(membership.peerStateMoved.bind(membership));
  const stats = new CrawlStats(() => clock.monotonic());
  let wakes = 0;
  // With `queues`: --partition host, and ready hosts of this node (by rendezvous against PEER) with those queues, nothing in flight.
  const c = [SELF, PEER].map(candidate);
  const dirs = Array.from({ length: 200 }, (_, i) => `h${i}.example`).filter((d) => ownerOf(d, c) === SELF);
  const hosts = new Map(
    (over.queues ?? []).map((queued, i) => [
      dirs[i]!,
      { dir: dirs[i]!, queued, phase: 'ready', politeness: { inFlight: 0 }, retries: [], robots: {}, leaseLost: false },
    ]),
  );
  const parts = {
    layout,
    membership,
    guard: { checkMarker: async () => undefined, fault: false },
    frontier: { queued: 0, readyCount: () => hosts.size, hosts, dropHost: () => [] },
    requests: { inFlight: 0, unwritten: 0, pump: () => undefined },
    keeper: {
      rebalance: () => false,
      dropLost: () => undefined,
      retryBlocked: () => undefined,
      releaseOrphanLeases: async () => undefined,
      letGo: async () => undefined,
    },
    leases: { verify: async () => [] },
    reseeder: { fullDue: false },
    handoffs: {
      viewChanged: () => undefined,
      lent: (_to: string, host: string) => void acts.push(`lend ${host}`),
      outbox: { flush: async () => void acts.push('flush') },
    },
  } as unknown as Parts;
  const heartbeat = new Heartbeat({
    config: { ...config, concurrency: 4, perHost: 1 },
    clock,
    log: silentLogger,
    stats,
    ownership: new Ownership(SELF, over.queues === undefined ? 'url' : 'host'),
    parts,
    events: {
      stopping: () => false,
      needFullReseed: () => undefined,
      leftDone: () => undefined,
      wake: () => void wakes++,
      onStoreError: (e) => assert.fail(String(e)),
    },
  });
  const writePeer = (r: NodeRecord): Promise<void> => writeRecord(layout, r);
  /** Moves the fake clock on in steps of 10 ms, each once the file reads and writes it started are done. */
  const run = async (ms: number): Promise<void> => {
    for (let t = 0; t < ms; t += 10) {
      clock.advance(10);
      for (;;) {
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
        // A heartbeat began (its record written) and has not ended (counted in stats), or a read is under way.
        if (pending === 0 && ticks === stats.heartbeats.beats) break;
        await new Promise((r) => setTimeout(r, 1));
      }
    }
  };
  return { heartbeat, stats, membership, writePeer, run, beats: () => beats, wakes: () => wakes, acts };
}

/** A node at work, and an idle one with --watch: neither takes the end's quicker pace. */
const NOT_ENDING = [
  { watch: false, state: 'crawling' as const },
  { watch: true, state: 'idle' as const },
];

/** A rig of case `c` with one peer's record `peer` on the mount, its heartbeat started (closed after the test). */
async function startedWith(t: TestContext, c: (typeof NOT_ENDING)[number], peer: NodeRecord) {
  const r = await rig({ watch: c.watch });
  t.after(() => r.heartbeat.close());
  await r.writePeer(peer);
  r.stats.state = c.state;
  r.heartbeat.start();
  return r;
}

describe('Heartbeat: the start, sooner', () => {
  test('the first STARTUP_BEATS heartbeats come a quarter heartbeat apart, then one a heartbeat', async (t) => {
    const r = await rig();
    t.after(() => r.heartbeat.close());
    r.stats.state = 'crawling';
    r.heartbeat.start();
    await r.run(HEARTBEAT / 4 + 50);
    assert.equal(r.beats(), 1);
    await r.run((HEARTBEAT * 3) / 4);
    assert.equal(r.beats(), STARTUP_BEATS);
    await r.run(HEARTBEAT - 100);
    assert.equal(r.beats(), STARTUP_BEATS);
    await r.run(100);
    assert.equal(r.beats(), STARTUP_BEATS + 1);
  });
});

describe('Heartbeat: the end, sooner', () => {
  test('an idle node reads the last busy peer between beats and beats at once when it turns idle', async (t) => {
    const r = await rig();
    t.after(() => r.heartbeat.close());
    await r.writePeer(peerRecord(1, 'crawling'));
    r.stats.state = 'idle';
    r.heartbeat.start();
    await r.run(HEARTBEAT + 50);
    assert.equal(r.beats(), STARTUP_BEATS, 'the startup heartbeats');
    assert.deepEqual(r.membership.lastBusyPeers(1), [PEER]);
    // The peer keeps working for a while: its record changes, but not whether it works.
    await r.writePeer(peerRecord(2, 'crawling'));
    await r.run(2 * END_WATCH_MAX_MS);
    assert.equal(r.beats(), STARTUP_BEATS, 'no beat while the peer works');
    const wakes = r.wakes();
    await r.writePeer(peerRecord(3, 'idle', 1));
    await r.run(END_WATCH_MAX_MS + 50);
    // 1,850 ms after the start: the next heartbeat is due at 2,000.
    assert.equal(r.beats(), STARTUP_BEATS + 1, "a beat at the end's pace, not at the next heartbeat");
    assert.equal(r.membership.allIdleSince() !== undefined, true, 'that beat saw every node idle');
    assert.equal(
      r.wakes(),
      wakes,
      'not woken yet: the peer wrote no record since (docs/protocol.md, "Rounds, reseeds and the end of the crawl")',
    );
    await r.run(HEARTBEAT);
    assert.equal(r.wakes(), wakes, 'its record read again, unchanged');
    await r.writePeer(peerRecord(4, 'idle', 1));
    await r.run(HEARTBEAT);
    assert.equal(r.wakes(), wakes + 1, 'its next record woke the node: its next reseed may end the crawl');
  });

  test("with two peers at work, the first of them to turn idle is seen at the end's pace too", async (t) => {
    const r = await rig();
    t.after(() => r.heartbeat.close());
    await r.writePeer(peerRecord(1, 'crawling'));
    await r.writePeer(remoteRecord('node-c', 1, { state: 'crawling' }));
    r.stats.state = 'idle';
    r.heartbeat.start();
    await r.run(HEARTBEAT + 50);
    assert.equal(r.membership.lastBusyPeers(END_WATCH_PEERS)?.length, 2);
    await r.writePeer(remoteRecord('node-c', 2, { state: 'idle', idleEpoch: 1 }));
    await r.run(END_WATCH_MAX_MS + 50);
    assert.equal(r.beats(), STARTUP_BEATS + 1, 'a beat at once');
    assert.deepEqual(r.membership.lastBusyPeers(1), [PEER], 'which saw the one still at work');
  });

  test("while every live node is idle, an idle node beats at the end's pace (END_WATCH_MAX_MS at this heartbeat), at most END_BEATS in a row: a peer's next record wakes it two beats after, not up to two heartbeats", async (t) => {
    const r = await rig();
    t.after(() => r.heartbeat.close());
    await r.writePeer(peerRecord(1, 'idle', 1));
    r.stats.state = 'idle';
    r.heartbeat.start();
    await r.run(HEARTBEAT + 50);
    assert.equal(r.beats(), STARTUP_BEATS, 'the startup heartbeats');
    assert.notEqual(r.membership.allIdleSince(), undefined, 'every live node seen idle');
    const wakes = r.wakes();
    // The peer beats as often (its counter moves): two reads after every node was seen idle give the proof.
    await r.writePeer(peerRecord(2, 'idle', 1));
    await r.run(END_WATCH_MAX_MS);
    await r.writePeer(peerRecord(3, 'idle', 1));
    await r.run(END_WATCH_MAX_MS);
    assert.equal(r.beats(), STARTUP_BEATS + 2, "a beat at each step of the end's pace");
    assert.equal(r.wakes(), wakes + 1, 'woken: its next reseed may end the crawl');
    await r.run(END_BEATS * END_WATCH_MAX_MS);
    assert.equal(r.beats(), STARTUP_BEATS + END_BEATS, 'no more than END_BEATS in a row');
    await r.run(HEARTBEAT);
    assert.equal(
      r.beats(),
      STARTUP_BEATS + END_BEATS + 1,
      'then one a heartbeat (a peer killed while idle is waited for at the usual pace)',
    );
  });

  test('a node at work, or with --watch, does not beat sooner when every node is idle', async (t) => {
    for (const c of NOT_ENDING) {
      const r = await startedWith(t, c, peerRecord(1, 'idle', 1));
      await r.run(2 * HEARTBEAT + 50);
      assert.equal(r.beats(), STARTUP_BEATS + 1, `${JSON.stringify(c)}: one beat a heartbeat after the startup ones`);
    }
  });

  test('a node at work, or with --watch, does not read between beats', async (t) => {
    for (const c of NOT_ENDING) {
      const r = await startedWith(t, c, peerRecord(1, 'crawling'));
      await r.run(HEARTBEAT + 50);
      await r.writePeer(peerRecord(2, 'idle', 1));
      await r.run(HEARTBEAT - 200);
      assert.equal(r.beats(), STARTUP_BEATS, `${JSON.stringify(c)}: learns it at the next heartbeat`);
    }
  });
});

describe('Heartbeat: nothing is written after close', () => {
  test('a look asked for before start (a sibling turned idle while this node joined) starts no second chain of beats', async (t) => {
    const r = await rig();
    t.after(() => r.heartbeat.close());
    r.stats.state = 'crawling';
    r.heartbeat.beatSoon(); // the supervisor's nudge, while the node still joins
    r.heartbeat.start();
    await r.run(HEARTBEAT * 3);
    await r.heartbeat.close();
    // The node leaves: its record goes; no heartbeat may write it again.
    await r.membership.leave();
    const after = r.beats();
    await r.run(HEARTBEAT * 3);
    assert.equal(r.beats(), after, 'a beat after close() would write the record again after leave()');
  });

  test('beats follow one schedule: a look before start adds none', async () => {
    const r = await rig();
    r.stats.state = 'crawling';
    r.heartbeat.beatSoon();
    r.heartbeat.start();
    await r.run(HEARTBEAT / 4 + 50);
    await r.heartbeat.close();
    assert.equal(r.beats(), 1);
  });
});

describe('Heartbeat: the node record', () => {
  test('its errors are the failures; URLs robots.txt excludes are counted apart, in excluded', async () => {
    const r = await rig();
    r.stats.countError('HTTP_404', true);
    r.stats.countError('ROBOTS_DISALLOWED', true);
    r.stats.countError('ROBOTS_DISALLOWED', true);
    const s = r.heartbeat.status('crawling');
    assert.deepEqual([s.errors, s.excluded], [1, 2]);
  });
});

describe('Heartbeat: work flows to free slots', () => {
  test('a peer that turns idle gets a host in the heartbeat that reads its record; the record naming the lend is written before the queue', async (t) => {
    const r = await rig({ queues: [30, 12, 9] });
    t.after(() => r.heartbeat.close());
    await r.writePeer(remoteRecord(PEER, 1, { state: 'crawling', spare: 0, wanting: 0 }));
    r.stats.state = 'crawling';
    r.heartbeat.start();
    await r.run(HEARTBEAT + 50);
    assert.deepEqual(
      r.acts.filter((a) => a !== 'beat'),
      [],
      'a busy peer and no host waiting for a slot: nothing moves',
    );
    await r.writePeer(remoteRecord(PEER, 2, { state: 'idle', idleEpoch: 1, spare: 4, wanting: 0 }));
    const before = r.acts.length;
    await r.run(HEARTBEAT);
    // The beat that read the idle record: its own record, the lend, the record that names it, its queue.
    assert.deepEqual(
      r.acts.slice(before).map((a) => a.split(' ')[0]),
      ['beat', 'lend', 'beat', 'flush'],
    );
    assert.equal(r.acts.filter((a) => a.startsWith('lend')).length, 1, 'one host, and this node keeps work');
  });
});
