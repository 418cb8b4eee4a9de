import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeRecord } from '../../../src/cluster/node-record.js';
import { Ownership } from '../../../src/cluster/ownership.js';
import { candidate, ownerOf } from '../../../src/cluster/rendezvous.js';
import type { Parts } from '../../../src/crawl/node-parts.js';
import { SurplusLender } from '../../../src/crawl/surplus-lender.js';
import { silentLogger } from '../../../src/progress/logger.js';
import { CrawlStats } from '../../../src/progress/stats.js';
import { frontierConfig } from '../../support/frontier-rig.js';
import { remoteRecord } from '../../support/node-records.js';

const SELF = 'lender';

/** Host directories that rendezvous hashing gives to SELF among `nodes`. */
function ownHosts(nodes: readonly string[], count: number): string[] {
  const c = nodes.map(candidate);
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) if (ownerOf(`h${i}.example`, c) === SELF) out.push(`h${i}.example`);
  return out;
}

/** A ready host with `queued` URLs and nothing in flight, as the lender looks at it. */
const readyHost = (dir: string, queued: number, inFlight: number) => ({
  dir,
  queued,
  phase: 'ready',
  politeness: { inFlight },
  retries: [],
  robots: {},
  leaseLost: false,
});

/**
 * A SurplusLender over stub parts: this node holds `queues` (host -> queued URLs) with
 * --concurrency 4 --per-host 1, its peers' records are `peers`. Returns what it lent, to whom.
 */
async function lendWith(
  queues: readonly number[],
  peers: readonly NodeRecord[],
  inFlight = 0,
  fullDue = false,
): Promise<{ host: string; to: string }[]> {
  const ids = [SELF, ...peers.map((r) => r.id)];
  const hosts = new Map(ownHosts(ids, queues.length).map((dir, i) => [dir, readyHost(dir, queues[i]!, inFlight)]));
  const ownership = new Ownership(SELF, 'host');
  ownership.setLive(ids);
  const lent: { host: string; to: string }[] = [];
  const parts = {
    handoffs: { lent: (to: string, host: string) => void lent.push({ host, to }) },
    frontier: { hosts, dropHost: () => [] },
    keeper: { letGo: async () => undefined },
    membership: { livePeers: () => peers, recordOf: (id: string) => peers.find((r) => r.id === id), counter: 7 },
    guard: { fault: false },
    requests: { unwritten: 0 },
    reseeder: { fullDue },
  } as unknown as Parts;
  const lender = new SurplusLender({
    config: frontierConfig({ nodeId: SELF, concurrency: 4, perHost: 1 }),
    log: silentLogger,
    stats: new CrawlStats(() => 0),
    ownership,
    parts,
    stopping: () => false,
    fenced: () => false,
  });
  await lender.lend();
  return lent;
}

const idle = (id: string) => remoteRecord(id, 5, { state: 'idle', spare: 4, wanting: 0 });
const busy = (id: string, slots: number) =>
  remoteRecord(id, 5, { state: 'crawling', spare: Math.max(0, 4 - slots), wanting: Math.max(0, slots - 4) });

describe('SurplusLender: hosts flow to free slots', () => {
  test('with more hosts waiting than slots, it lends to a peer with free slots, longest queue first', async () => {
    const lent = await lendWith([3, 30, 10, 20, 5, 8], [idle('peer')]);
    assert.ok(lent.length > 0 && lent.every((l) => l.to === 'peer'));
    assert.equal(lent.length, 2); // its surplus: 6 hosts want 6 slots, it has 4
  });

  test("nothing is lent while a full reseed is due: a host gained may have URLs that only other hosts' records name", async () => {
    assert.deepEqual(await lendWith([3, 30, 10, 20, 5, 8], [idle('peer')], 0, true), []);
    assert.deepEqual(await lendWith([30, 3, 12], [idle('peer')], 0, true), []);
  });

  test('no host waits for a slot, a peer is idle: it gets one host, the shortest queue worth a move, and this node keeps work', async () => {
    const lent = await lendWith([30, 3, 12], [idle('peer')]);
    assert.equal(lent.length, 1);
    assert.equal(lent[0]!.to, 'peer');
    const short = ownHosts([SELF, 'peer'], 3)[1];
    assert.equal(lent[0]!.host, short);
  });

  test('a node with one host with work keeps it, however idle its peers', async () => {
    assert.deepEqual(await lendWith([30], [idle('peer')]), []);
    assert.deepEqual(await lendWith([30, 0, 0], [idle('peer'), idle('other')]), []);
  });

  test('two nodes that could give an idle peer a host: only the one whose share it is gives it', async () => {
    // The peer `rich` wants more slots than this node: the one idle peer is its to serve.
    assert.deepEqual(await lendWith([30, 12], [idle('peer'), busy('rich', 4)]), []);
    // This node wants more: it serves the idle peer.
    assert.equal((await lendWith([30, 12, 9], [idle('peer'), busy('poor', 2)])).length, 1);
    // Two idle peers and two such nodes: one each.
    assert.equal((await lendWith([30, 12, 9], [idle('p1'), idle('p2'), busy('rich', 4)])).length, 1);
  });

  test('nobody idle and no host waiting for a slot: nothing moves', async () => {
    assert.deepEqual(await lendWith([30, 12, 9], [busy('peer', 3)]), []);
  });

  test('a host with requests in flight goes to an idle peer (every host has a slot), never to relieve a surplus', async () => {
    assert.equal((await lendWith([30, 12], [idle('peer')], 1)).length, 1);
    assert.deepEqual(await lendWith([3, 30, 10, 20, 5, 8], [idle('peer')], 1), []);
  });
});
