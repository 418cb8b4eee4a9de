import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { realNode } from '../../../src/sim/real-node.js';
import { runSeed } from '../../../src/sim/sim-run.js';

/** A seed kept as a regression test: its faults as drawn (the header names them), and every property kept. */
async function keepsEveryProperty(seed: number, faults: RegExp): Promise<void> {
  const r = await runSeed(seed, { factory: realNode });
  assert.match(r.header[1]!, faults);
  assert.deepEqual(r.violations, []);
}

describe('simulated runs of real nodes', { timeout: 300_000 }, () => {
  test('one seed run twice gives the same trace, result and faults', async () => {
    const a = await runSeed(10, { factory: realNode });
    const b = await runSeed(10, { factory: realNode });
    assert.equal(a.digest, b.digest);
    assert.equal(a.summary, b.summary);
    assert.deepEqual(a.violations, b.violations);
    assert.deepEqual([...a.faults], [...b.faults]);
    assert.notEqual((await runSeed(11, { factory: realNode })).digest, a.digest);
  });

  test('seed 10: a node paused past dead-after starts no request on a host taken over meanwhile (its first beat keeps it fenced until its leases are read back)', async () => {
    await keepsEveryProperty(10, /pause n1@3715 for 3087/);
  });

  test('seed 14: a page fetched before the mount failed under its commit is written once the mount is back, not dropped (its node was fenced meanwhile and still holds the host)', async () => {
    await keepsEveryProperty(14, /eio all 2075\.\.3230/);
  });

  test('seed 139: a node whose mount stalled between listing nodes/ and reading the records does not count every peer dead (changes are timed when the reads are in)', async () => {
    await keepsEveryProperty(139, /stall n0 198\.\.2370/);
  });

  test('seed 202: robots.txt whose read from the mount stalled past dead-after is not fetched by a node that lost the host meanwhile', async () => {
    await keepsEveryProperty(202, /stall n1 624\.\.3142/);
  });

  test('seed 292: a heartbeat that went out after a stall in the steps before it keeps the node fenced until its leases are read back', async () => {
    await keepsEveryProperty(292, /stall n1 851\.\.3473/);
  });

  test('seed 685: a lease whose release failed on EIO stays held and is released again, not left on the mount in the name of a live node (the owner of its host waited for it for good: the crawl never ended)', async () => {
    const r = await runSeed(685, { factory: realNode });
    assert.match(r.header[1]!, /eio all 2024\.\.2628/);
    assert.deepEqual(
      r.violations.filter((v) => v.startsWith('not ended') || v.startsWith('lease left') || v.startsWith('fetched twice')),
      [],
    );
  });

  test('seed 12: a node counted dead that finds its lease taken reseeds fully next, so that the links of the queue it dropped are fetched once the host comes back to it', async () => {
    const r = await runSeed(12, { factory: realNode, cacheMs: 0 });
    assert.match(r.header[1]!, /eio all 3006\.\.4683/);
    assert.deepEqual(r.violations, []);
  });

  test('seed 17: a node killed while idle, just before the others end, is found dead before they end (every live peer must write a record after all were idle), and its hosts are crawled', async () => {
    await keepsEveryProperty(17, /kill n0@1684/);
  });

  test('seed 59: a node silent past half of dead-after reseeds fully next, so that it takes a host it counted as quiet (its owners ended done) once the host comes back to it, with a retry another node wrote meanwhile', async () => {
    await keepsEveryProperty(59, /stall n2 2986\.\.6840/);
  });

  test('seed 2001: a lease taken by a node started again with its id is not taken over by a peer whose view still counts that id dead (its record, read before the takeover, moved)', async () => {
    await keepsEveryProperty(2001, /kill n1@2769 restart\+7531/);
  });

  test("seed 2583: a node killed while its mount probe's file landed leaves a temporary file of its own, not a finished probe file no one removes", async () => {
    await keepsEveryProperty(2583, /kill n2@4518 restart\+1816 new id/);
  });

  test('seed 6795: a lease whose release was renamed aside on the server while the mount answered EIO is removed once the mount is back, not left as a temporary file', async () => {
    await keepsEveryProperty(6795, /eio all 3809\.\.5162/);
  });

  test("seed 5572: pages found by a node that stayed after the end by the rule (a host left for a later run, taken up) and was then killed for good are that later run's", async () => {
    await keepsEveryProperty(5572, /kill n0@4393, kill n1@4930,/);
  });

  test('seed 5503: a node that read no marker, then paused while others made the data directory, takes their marker rather than ending with NOT_A_DATA_DIR', async () => {
    await keepsEveryProperty(5503, /pause n1@21 for 3329,/);
  });

  test('seeds 5464, 757, 1508, 5543, 5623: a lease left by a node killed and restarted with the same id within dead-after, of a host its new process does not own, is taken over by the owner (it waited for a live holder for good: the crawl never ended)', async () => {
    const r = await runSeed(5464, { factory: realNode });
    assert.match(r.header[1]!, /kill n1@1693 restart\+5713,/);
    assert.deepEqual(r.violations, []);
    for (const seed of [757, 1508, 5543, 5623])
      assert.deepEqual((await runSeed(seed, { factory: realNode })).violations, [], `seed ${seed}`);
  });

  test("seeds 56, 25, 140, 172, 258, 278, 280: a host handed over between live nodes on NFS with cached listings is not fetched again by its new owner (its listing predated the previous owner's last commits; the summary written at release covers them)", async () => {
    const r = await runSeed(56, { factory: realNode });
    assert.match(r.header[0]!, /mount nfs cache 300/);
    assert.match(r.header[1]!, /join n4@1286/);
    assert.deepEqual(r.violations, []);
    for (const seed of [25, 140, 172, 258, 278, 280])
      assert.deepEqual((await runSeed(seed, { factory: realNode })).violations, [], `seed ${seed}`);
  });

  test('seed 769: a page written during a fault of the mount does not make the node give up on it at once (test/unit/crawl/mount-guard.test.ts has the case itself)', async () => {
    await keepsEveryProperty(769, /eio all 3414\.\.3415/);
  });

  test('seed 6622: a node whose listing of seeds/ failed on EIO as it joined waits out the mount, rather than stop with "nothing to crawl"', async () => {
    await keepsEveryProperty(6622, /eio all 57\.\.1701/);
  });

  test('seeds 116, 114, 142, 477, 699, 954: a node killed after it proved itself alive, before it read its inbox (or fetched what it read), is found dead before the others end (each live peer must say it settled in their view), and its hosts are crawled', async () => {
    const r = await runSeed(116, { factory: realNode });
    assert.match(r.header[1]!, /kill n0@974 restart\+6291/);
    assert.deepEqual(r.violations, []);
    for (const seed of [114, 142, 477, 699, 954])
      assert.deepEqual((await runSeed(seed, { factory: realNode })).violations, [], `seed ${seed}`);
  });

  test("seed 961: a node killed and started again with its id within dead-after is lost to its peers: the lender of a host it had borrowed takes the host back and reseeds fully (the new process counted the lend, whose queue its earlier process had read, and never read the host's records)", async () => {
    await keepsEveryProperty(961, /kill n1@2156 restart\+1082/);
  });

  test('seed 1223: the links to a host left alone for this run (robots.txt unavailable) that its node found since are not lost when it ends: recorded at its exit, its peers find them when one takes the host', async () => {
    await keepsEveryProperty(1223, /pause n1@1029 for 5470/);
  });

  test('seeds 327 and 1132: a run in which no node ended by the rule (every node killed for good, or refused to start) is unfinished, its pages left to a later run', async () => {
    for (const seed of [327, 1132]) {
      const r = await runSeed(seed, { factory: realNode });
      assert.equal(r.unfinished, 'no node ended by the rule', `seed ${seed}`);
      assert.deepEqual(r.violations, [], `seed ${seed}`);
    }
    assert.equal((await runSeed(961, { factory: realNode })).unfinished, undefined);
  });

  test('seeds 1 to 50 on a mount without caches keep every property (docs/simulator.md, "What it found")', async () => {
    const failing: number[] = [];
    for (let seed = 1; seed <= 50; seed++) {
      const r = await runSeed(seed, { factory: realNode, cacheMs: 0 });
      if (r.violations.length > 0) failing.push(seed);
    }
    assert.deepEqual(failing, [], `failing seeds: ${failing.join(', ')}`);
  });

  test('seed 1049: a host moving to a node restarted with its id keeps its lease until its summary is written (the release of leases no host needs let it go first; the new owner, its listing cached, fetched the last pages again)', async () => {
    await keepsEveryProperty(1049, /kill n1@367 restart\+3372/);
  });

  test('seed 958: a page whose commit failed on ENOSPC keeps its host slot, so the host let go meanwhile keeps its lease until the page is written (test/unit/crawl/request-runner.test.ts has the case itself)', async () => {
    await keepsEveryProperty(958, /enospc all 2810\.\.3304/);
  });

  test('seed 472: the next hop of a redirect chain is not sent by a node whose wait for it was a pause past dead-after (fenced, the host taken over)', async () => {
    await keepsEveryProperty(472, /pause n0@1082 for 3886/);
  });

  test("seeds 684, 2760: a node that took over a dead node's host lends no host before its full reseed (the borrower got only the queue, and the URLs of the host named by other hosts' records were never fetched)", async () => {
    const r = await runSeed(684, { factory: realNode });
    assert.match(r.header[1]!, /kill n1@1855, join n4@3430, kill n0@4546/);
    assert.deepEqual(r.violations, []);
    assert.deepEqual((await runSeed(2760, { factory: realNode })).violations, []);
  });

  test('seed 1829: a node does not end by the rule while a full reseed is due (its last peer was counted dead during its reseed, which read no record for the hosts it gained: the seed was never fetched)', async () => {
    await keepsEveryProperty(1829, /kill n1@1789 restart\+5673 new id/);
  });

  test("seed 4728: a lease created while the mount failed, whose read back failed, is held, so that it is released when its host moves (it was left on the mount in the name of a live node: the host's owner waited for it for good)", async () => {
    await keepsEveryProperty(4728, /kill n1@1665 restart\+906, eio all 103\.\.1525/);
  });

  test("seed 151 (on the no-last-look mutation's timing): a node that finds a lease lost after a disk full asks for its full reseed at once, before the host comes back to it (its dropped links were never fetched)", async () => {
    const r = await runSeed(151, { factory: realNode, mutation: { noLastLook: true } });
    assert.match(r.header[1]!, /enospc all 2185\.\.4008/);
    assert.deepEqual(r.violations, []);
  });

  test('nodes that end without waiting for their peers to say they settled break a property in the end-kill scenario (seeds 9, 11, 13), which keeps them all without the mutation', async () => {
    for (const seed of [9, 11, 13]) {
      const r = await runSeed(seed, { factory: realNode, scenario: 'end-kill', mutation: { noSettle: true } });
      assert.equal(r.faults.get('kill'), 1, `seed ${seed}: the scenario's kill`);
      assert.ok(
        r.violations.some((v) => v.startsWith('not done at the end:')),
        `seed ${seed}: ${r.violations.join('\n')}`,
      );
      assert.deepEqual((await runSeed(seed, { factory: realNode, scenario: 'end-kill' })).violations, [], `seed ${seed}`);
    }
  });

  test("late-send-on: a file sent on lands in a done node's inbox only when nodes end before their peers settled (seeds 283, 327 with no-settle), and then nothing is lost without the last look either", async () => {
    for (const seed of [283, 327]) {
      for (const mutation of [undefined, { noLastLook: true }]) {
        const r = await runSeed(seed, { factory: realNode, scenario: 'late-send-on', ...(mutation === undefined ? {} : { mutation }) });
        assert.equal(r.hazards, 0, `seed ${seed}, ${JSON.stringify(mutation)}: the settle rule keeps the case away`);
        assert.deepEqual(r.violations, [], `seed ${seed}`);
      }
      const withLook = await runSeed(seed, { factory: realNode, scenario: 'late-send-on', mutation: { noSettle: true } });
      const without = await runSeed(seed, {
        factory: realNode,
        scenario: 'late-send-on',
        mutation: { noSettle: true, noLastLookOnly: true },
      });
      for (const r of [withLook, without]) {
        assert.equal(r.hazards, 1, `seed ${seed}: the case came about`);
        assert.deepEqual(r.violations, [], `seed ${seed}`);
      }
      // A last look found a peer moved and held a node back: without it the run went otherwise.
      assert.notEqual(without.digest, withLook.digest, `seed ${seed}`);
    }
  });

  test("late-send-on: nodes that end neither after their peers settled nor after a last look break a property (seed 11: the killed node's inbox, as no-settle alone), which the seed keeps without the mutation", async () => {
    const r = await runSeed(11, { factory: realNode, scenario: 'late-send-on', mutation: { noSettle: true, noLastLookOnly: true } });
    assert.equal(r.faults.get('kill'), 1);
    assert.ok(
      r.violations.some((v) => v.startsWith('not done at the end:')),
      r.violations.join('\n'),
    );
    assert.deepEqual((await runSeed(11, { factory: realNode, scenario: 'late-send-on' })).violations, []);
  });

  test('seed 57 of late-send-on, with no-last-look: a link set aside for a host left alone is recorded when its node ends, and the node that takes the host later fetches it', async () => {
    const r = await runSeed(57, { factory: realNode, scenario: 'late-send-on', mutation: { noLastLook: true } });
    assert.equal(r.faults.get('kill') ?? 0, 0, 'no kill came');
    assert.deepEqual(r.violations, []);
  });

  test('the end-kill scenario draws no fault of its own: its one kill comes when a node idle among idle peers has new work in its inbox', async () => {
    const r = await runSeed(9, { factory: realNode, scenario: 'end-kill' });
    assert.equal(r.header[1], 'faults: none');
    assert.deepEqual([...r.faults], [['kill', 1]]);
  });

  test('a mount whose link replaces an existing name (no exclusive create) breaks a property within the first seeds', async () => {
    const caught: string[] = [];
    for (let seed = 1; seed <= 4; seed++) {
      const r = await runSeed(seed, { factory: realNode, cacheMs: 0, mutation: { server: { linkReplaces: true } } });
      caught.push(...r.violations);
      assert.deepEqual((await runSeed(seed, { factory: realNode, cacheMs: 0 })).violations, []);
    }
    assert.ok(
      caught.some((v) => v.startsWith('per-host:')),
      caught.join('\n'),
    );
  });
});
