import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { describe, test } from 'node:test';
import { LEASE_READ_TURN, LEASE_READS_PER_BEAT, Leases, type LeaseRecord } from '../../../src/cluster/lease.js';
import { bootId } from '../../../src/cluster/local-liveness.js';
import { Layout } from '../../../src/store/layout.js';
import { hookFs, hookFsPromises } from '../../support/fs-hook.js';
import { exitedPid } from '../../support/processes.js';
import { freshPaths } from '../../support/temp-paths.js';

const A = 'node-a';
const B = 'node-b';
const HOST = 'example.org';

const freshPath = freshPaths('mountcrawl-lease-');
let counter = 0;

async function freshLayout(): Promise<Layout> {
  const layout = new Layout(freshPath());
  await mkdir(layout.dir('hosts'), { recursive: true });
  return layout;
}

const alive = (): boolean => true;
/** An isAlive that says every node but `dead` is alive. */
const allBut =
  (...dead: string[]) =>
  (id: string): boolean =>
    !dead.includes(id);

async function readLease(layout: Layout, host = HOST): Promise<LeaseRecord | undefined> {
  try {
    return JSON.parse(await readFile(layout.lease(host), 'utf8')) as LeaseRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** A lease file as some node wrote it (an earlier run, another machine). */
async function plantLease(layout: Layout, record: Partial<LeaseRecord> & { node: string }, host = HOST): Promise<void> {
  const full: LeaseRecord = { host, token: `planted-${counter++}`, acquiredAt: '2025-01-15T12:00:00.000Z', ...record };
  await writeFile(layout.lease(host), `${JSON.stringify(full)}\n`);
}

/**
 * The entries of hosts/, without takeover claims: a node that takes over a stale lease first
 * claims it exclusively with `.<host>.lease.<stale token>~takeover~0.tmp`, left for the temp
 * sweeper (see takeoverClaims).
 */
/** Leases whose reads take a while, as over a mount with a few ms per round trip; `most` counts the reads in flight at once. */
class SlowLeases extends Leases {
  most = 0;
  #inFlight = 0;
  override async read(hostDir: string): Promise<LeaseRecord | undefined> {
    this.#inFlight++;
    this.most = Math.max(this.most, this.#inFlight);
    await new Promise((r) => setTimeout(r, 5));
    try {
      return await super.read(hostDir);
    } finally {
      this.#inFlight--;
    }
  }
}

/** Node A holds 40 leases through SlowLeases, of which B has since taken h7.example's. */
async function fortyHeldOneTaken(): Promise<{ layout: Layout; a: SlowLeases; hosts: string[] }> {
  const layout = await freshLayout();
  const a = new SlowLeases(layout, A, alive);
  const hosts = Array.from({ length: 40 }, (_, i) => `h${i}.example`);
  for (const h of hosts) assert.equal((await a.acquire(h)).ok, true);
  await rm(layout.lease('h7.example'));
  await plantLease(layout, { node: B }, 'h7.example');
  a.most = 0;
  return { layout, a, hosts };
}

/** The next rename fails with EIO, made first on the server when `happened` (a lost reply); returns what undoes the hook. */
function failRenameOnce(happened: boolean): () => void {
  let armed = true;
  return hookFsPromises<(from: string, to: string) => Promise<void>>('rename', (original) => async (from, to) => {
    if (!armed) return original(from, to);
    armed = false;
    if (happened) await original(from, to);
    throw Object.assign(new Error(`EIO: simulated, rename '${from}'`), { code: 'EIO' });
  });
}

async function hostsDir(layout: Layout): Promise<string[]> {
  return (await readdir(layout.dir('hosts'))).filter((n) => !n.includes('~takeover~')).sort();
}

/** The takeover claims in hosts/. */
async function takeoverClaims(layout: Layout): Promise<string[]> {
  return (await readdir(layout.dir('hosts'))).filter((n) => n.includes('~takeover~')).sort();
}

describe('Leases.acquire', () => {
  test('takes a free lease: the file names this node, this process and a fresh token; no temp left', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    assert.deepEqual(await a.acquire(HOST), { ok: true });
    assert.equal(a.holds(HOST), true);
    assert.deepEqual([...a.held()], [HOST]);
    const lease = await readLease(layout);
    assert.equal(lease?.node, A);
    assert.equal(lease?.host, HOST);
    assert.match(lease?.token ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(lease?.pid, process.pid);
    assert.equal(lease?.hostname, hostname());
    assert.equal(lease?.bootId, bootId());
    assert.ok(!Number.isNaN(Date.parse(lease?.acquiredAt ?? '')));
    assert.deepEqual(await a.read(HOST), lease);
    assert.deepEqual(await hostsDir(layout), [`${HOST}.lease`]);
  });

  test('acquiring a lease already held changes nothing', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    await a.acquire(HOST);
    const first = await readLease(layout);
    assert.deepEqual(await a.acquire(HOST), { ok: true });
    assert.deepEqual(await readLease(layout), first);
  });

  test('a lease held by a live node blocks: nothing changes on the mount', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    const b = new Leases(layout, B, alive);
    await a.acquire(HOST);
    const held = await readLease(layout);
    assert.deepEqual(await b.acquire(HOST), { ok: false, holder: A });
    assert.equal(b.holds(HOST), false);
    assert.deepEqual(await readLease(layout), held);
    assert.deepEqual(await hostsDir(layout), [`${HOST}.lease`]);
  });

  test("a dead holder's lease is taken over, and the old holder finds it lost", async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    await a.acquire(HOST);
    const b = new Leases(layout, B, allBut(A));
    assert.deepEqual(await b.acquire(HOST), { ok: true, tookOver: A });
    const lease = await readLease(layout);
    assert.equal(lease?.node, B);
    assert.equal(b.holds(HOST), true);
    assert.deepEqual(await hostsDir(layout), [`${HOST}.lease`], 'the old lease moved aside and removed, no temp left');
    assert.equal((await takeoverClaims(layout)).length, 1, 'one claim for the one stale lease taken over');
    assert.deepEqual(await a.verify('all'), [HOST]);
    await b.release(HOST);
    assert.deepEqual(await takeoverClaims(layout), [], 'the claim goes with a graceful release');
    assert.equal(a.holds(HOST), false);
  });

  test('a lease with this node id from an earlier run is taken over even though the id is alive', async () => {
    const layout = await freshLayout();
    await plantLease(layout, { node: A, token: 'earlier-run', hostname: 'elsewhere.example', pid: 1, bootId: 'x' });
    const a = new Leases(layout, A, alive);
    assert.deepEqual(await a.acquire(HOST), { ok: true, tookOver: A });
    const lease = await readLease(layout);
    assert.equal(lease?.node, A);
    assert.notEqual(lease?.token, 'earlier-run');
    assert.equal(lease?.pid, process.pid);
    assert.deepEqual(await hostsDir(layout), [`${HOST}.lease`]);
  });

  test('a lease of an earlier process of a live node id (its record names another process now) is taken over; one of the process that runs it blocks', async () => {
    const layout = await freshLayout();
    const asked: string[] = [];
    const processes = {
      incarnation: 'mine',
      replaced: async (id: string, incarnation: string) => {
        asked.push(`${id}:${incarnation}`);
        return id === B && incarnation === 'before-restart';
      },
      cameBack: async () => false,
    };
    await plantLease(layout, { node: B, incarnation: 'running' });
    const a = new Leases(layout, A, alive, processes);
    assert.deepEqual(await a.acquire(HOST), { ok: false, holder: B });
    await rm(layout.lease(HOST));
    await plantLease(layout, { node: B });
    assert.deepEqual(await a.acquire(HOST), { ok: false, holder: B }, 'a lease of an older version names no process');
    assert.deepEqual(asked, [`${B}:running`]);
    await rm(layout.lease(HOST));
    await plantLease(layout, { node: B, incarnation: 'before-restart' });
    assert.deepEqual(await a.acquire(HOST), { ok: true, tookOver: B });
    const lease = await readLease(layout);
    assert.equal(lease?.node, A);
    assert.equal(lease?.incarnation, 'mine', 'the new lease names the process of its taker');
    assert.deepEqual(await hostsDir(layout), [`${HOST}.lease`]);
  });

  test('a holder this view counts dead that wrote its record since (started again, or came back) keeps its lease; one still silent loses it', async () => {
    const layout = await freshLayout();
    let back = true;
    const asked: string[] = [];
    const processes = {
      incarnation: 'mine',
      replaced: async () => false,
      cameBack: async (id: string) => {
        asked.push(id);
        return back;
      },
    };
    await plantLease(layout, { node: B, incarnation: 'new-process' });
    const a = new Leases(layout, A, allBut(B), processes);
    assert.deepEqual(await a.acquire(HOST), { ok: false, holder: B }, 'its record moved since this view: alive');
    assert.equal((await readLease(layout))?.node, B);
    back = false;
    assert.deepEqual(await a.acquire(HOST), { ok: true, tookOver: B }, 'its record as this view saw it: dead');
    assert.deepEqual(asked, [B, B]);
  });

  test('a lease of a process of this machine that no longer runs is taken over at once', async (t) => {
    if (bootId() === '') return t.skip('no /proc boot id on this system');
    const layout = await freshLayout();
    const pid = await exitedPid();
    await plantLease(layout, { node: 'node-c', hostname: hostname(), bootId: bootId(), pid });
    const b = new Leases(layout, B, alive); // membership would still count node-c alive
    assert.deepEqual(await b.acquire(HOST), { ok: true, tookOver: 'node-c' });
    assert.equal((await readLease(layout))?.node, B);
  });

  test('a lease of a live process of this machine with another node id blocks', async (t) => {
    if (bootId() === '') return t.skip('no /proc boot id on this system');
    const layout = await freshLayout();
    await plantLease(layout, { node: 'node-c', hostname: hostname(), bootId: bootId(), pid: process.ppid });
    const b = new Leases(layout, B, alive);
    assert.deepEqual(await b.acquire(HOST), { ok: false, holder: 'node-c' });
  });

  test('many nodes racing for a free lease: exactly one gets it, the others name it', async () => {
    for (let round = 0; round < 10; round++) {
      const layout = await freshLayout();
      const ids = Array.from({ length: 8 }, (_, i) => `racer-${i}`);
      const results = await Promise.all(ids.map((id) => new Leases(layout, id, alive).acquire(HOST)));
      const winners = ids.filter((_, i) => results[i]!.ok);
      assert.equal(winners.length, 1, `round ${round}: ${JSON.stringify(results)}`);
      for (const r of results) if (!r.ok) assert.equal(r.holder, winners[0]);
      assert.equal((await readLease(layout))?.node, winners[0]);
      assert.deepEqual(await hostsDir(layout), [`${HOST}.lease`]);
    }
  });

  test("two nodes taking over one dead node's lease: a third node's new lease is never moved aside under it", async () => {
    // W, L1 and L2 all judged dead-node's lease stale (their live sets disagreed for a
    // moment). L1's rename aside is delayed until W has taken the host; while L1 holds W's
    // lease aside (before it links it back), L2 finds no lease and creates its own.
    const layout = await freshLayout();
    await plantLease(layout, { node: 'dead-node' });
    const w = new Leases(layout, 'node-w', allBut('dead-node'));
    const l1 = new Leases(layout, 'node-l1', allBut('dead-node'));
    const l2 = new Leases(layout, 'node-l2', allBut('dead-node'));
    let wDone!: () => void;
    const wTook = new Promise<void>((resolve) => (wDone = resolve));
    let l2Result: Awaited<ReturnType<Leases['acquire']>> | undefined;
    type Rename = (from: string, to: string) => Promise<void>;
    const restore = hookFsPromises<Rename>('rename', (original) => async (from, to) => {
      if (!String(to).includes('~node-l1~')) return original(from, to);
      await wTook;
      await original(from, to);
      l2Result = await l2.acquire(HOST);
    });
    let l1Result;
    let wResult;
    try {
      const l1Pending = l1.acquire(HOST);
      wResult = await w.acquire(HOST);
      wDone();
      l1Result = await l1Pending;
    } finally {
      restore();
    }
    assert.equal(l1Result.ok, false);
    const holders = [wResult.ok && 'node-w', l2Result?.ok && 'node-l2'].filter(Boolean);
    assert.equal(holders.length, 1, `both think they hold the lease; the file names ${(await readLease(layout))?.node}`);
  });
});

describe('Leases.release', () => {
  test('removes our own lease and forgets it; no temp left', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    await a.acquire(HOST);
    await a.release(HOST);
    assert.equal(a.holds(HOST), false);
    assert.equal(await readLease(layout), undefined);
    assert.deepEqual(await hostsDir(layout), []);
    // Another node can take it now.
    assert.deepEqual(await new Leases(layout, B, alive).acquire(HOST), { ok: true });
  });

  test('never removes a lease another node holds now', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    await a.acquire(HOST);
    // B took the host over while A was presumed dead; A does not know yet.
    await new Leases(layout, B, allBut(A)).acquire(HOST);
    const bLease = await readLease(layout);
    assert.equal(bLease?.node, B);
    await a.release(HOST);
    assert.equal(a.holds(HOST), false);
    assert.deepEqual(await readLease(layout), bLease);
    assert.deepEqual(await hostsDir(layout), [`${HOST}.lease`]);
  });

  test('never removes a lease of the same node id with another token (another run of this id)', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    await a.acquire(HOST);
    await rm(layout.lease(HOST));
    await plantLease(layout, { node: A, token: 'another-run' });
    await a.release(HOST);
    assert.equal((await readLease(layout))?.token, 'another-run');
  });

  test('releaseAll gives up every lease held, several at once, and never one another node holds now', async () => {
    const { layout, a } = await fortyHeldOneTaken();
    await a.releaseAll();
    assert.ok(a.most > 1, `releases in flight at once: ${a.most}`);
    assert.deepEqual([...a.held()], []);
    assert.deepEqual(await hostsDir(layout), ['h7.example.lease'], 'only the lease B holds is left, and no temp file');
    assert.equal((await readLease(layout, 'h7.example'))?.node, B);
  });

  for (const happened of [true, false]) {
    test(`a release whose rename aside failed with EIO (${happened ? 'done on the server all the same' : 'not done'}): the next release settles it, the lease gone and no temp left`, async () => {
      const layout = await freshLayout();
      const a = new Leases(layout, A, alive);
      await a.acquire(HOST);
      const restore = failRenameOnce(happened);
      try {
        await assert.rejects(a.release(HOST), /EIO/);
      } finally {
        restore();
      }
      assert.equal(a.holds(HOST), true, 'still held: released again later');
      assert.equal((await hostsDir(layout)).length, 1, happened ? 'the lease under a temporary name' : 'the lease');
      await a.release(HOST);
      assert.equal(a.holds(HOST), false);
      assert.deepEqual(await hostsDir(layout), []);
      assert.deepEqual(await new Leases(layout, B, alive).acquire(HOST), { ok: true });
    });
  }

  test('a takeover whose rename of the stale lease failed with EIO after it was done: the next take removes it and takes the host, no temp left', async () => {
    const layout = await freshLayout();
    await plantLease(layout, { node: B });
    const a = new Leases(layout, A, allBut(B));
    const restore = failRenameOnce(true);
    try {
      await assert.rejects(a.acquire(HOST), /EIO/);
    } finally {
      restore();
    }
    assert.equal((await hostsDir(layout))[0]?.includes(`~${A}~`), true, 'the stale lease, moved aside');
    assert.deepEqual(await a.acquire(HOST), { ok: true });
    assert.equal((await readLease(layout))?.node, A);
    assert.deepEqual(await hostsDir(layout), [`${HOST}.lease`]);
  });

  test('a host never held: nothing happens', async () => {
    const layout = await freshLayout();
    const b = new Leases(layout, B, alive);
    await b.acquire(HOST);
    const a = new Leases(layout, A, alive);
    await a.release(HOST);
    await a.release('other.example');
    assert.equal((await readLease(layout))?.node, B);
  });

  test('forget drops a lease from memory and leaves the file alone', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    await a.acquire(HOST);
    a.forget(HOST);
    assert.equal(a.holds(HOST), false);
    assert.equal((await readLease(layout))?.node, A);
  });
});

describe('Leases.verify', () => {
  test('nothing held: nothing to check, not even hosts/', async () => {
    const a = new Leases(new Layout(freshPath()), A, alive);
    assert.deepEqual(await a.verify('all'), []);
  });

  test('the listing finds a lease that vanished; reading finds one another node holds now', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    for (const h of ['h1.example', 'h2.example', 'h3.example']) assert.equal((await a.acquire(h)).ok, true);
    await rm(layout.lease('h1.example'));
    await rm(layout.lease('h2.example'));
    await plantLease(layout, { node: B }, 'h2.example');
    assert.deepEqual(await a.verify('none'), ['h1.example'], 'without reading, only the vanished one');
    assert.equal(a.holds('h1.example'), false);
    assert.equal(a.holds('h2.example'), true);
    assert.deepEqual(await a.verify('all'), ['h2.example']);
    assert.deepEqual([...a.held()], ['h3.example']);
    assert.deepEqual(await a.verify('all'), []);
    assert.equal((await readLease(layout, 'h2.example'))?.node, B, 'verify never touches the mount');
  });

  test('held leases are read back in parallel, not one round trip after another (a slow mount fenced its node)', async () => {
    const { a, hosts } = await fortyHeldOneTaken();
    assert.deepEqual(await a.verify('all'), ['h7.example']);
    assert.ok(a.most > 1, `reads in flight at once: ${a.most}`);
    assert.equal([...a.held()].length, hosts.length - 1);
  });

  test('a routine heartbeat reads a bounded turn of held leases: each within its turn, never thousands at once', async () => {
    const layout = await freshLayout();
    const reads: string[] = [];
    class CountingLeases extends Leases {
      override async read(hostDir: string): Promise<LeaseRecord | undefined> {
        reads.push(hostDir);
        return await super.read(hostDir);
      }
    }
    const a = new CountingLeases(layout, A, alive);
    // Few leases: each read once in LEASE_READ_TURN beats, spread over them.
    const few = Array.from({ length: 10 }, (_, i) => `f${i}.example`);
    for (const h of few) assert.equal((await a.acquire(h)).ok, true);
    for (let beat = 0; beat < LEASE_READ_TURN; beat++) {
      reads.length = 0;
      assert.deepEqual(await a.verify('some'), []);
      assert.equal(reads.length, 2, `beat ${beat}: ${reads.length} reads`);
    }
    // Many leases: at most LEASE_READS_PER_BEAT a beat, and a lease another node holds now is
    // found within one turn of them.
    const many = Array.from({ length: 200 }, (_, i) => `m${i}.example`);
    for (const h of many) assert.equal((await a.acquire(h)).ok, true);
    await rm(layout.lease('m150.example'));
    await plantLease(layout, { node: B }, 'm150.example');
    const turn = Math.ceil(210 / LEASE_READS_PER_BEAT) + 1;
    let found: string[] = [];
    for (let beat = 0; beat < turn && found.length === 0; beat++) {
      reads.length = 0;
      found = await a.verify('some');
      assert.ok(reads.length <= LEASE_READS_PER_BEAT, `beat ${beat}: ${reads.length} reads`);
    }
    assert.deepEqual(found, ['m150.example']);
    reads.length = 0;
    assert.deepEqual(await a.verify('all'), []);
    assert.equal(reads.length, 209, 'after a change of the live set, every lease at once');
  });

  test('a lease of this node id with another token counts as lost', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    await a.acquire(HOST);
    await rm(layout.lease(HOST));
    await plantLease(layout, { node: A, token: 'another-run' });
    assert.deepEqual(await a.verify('all'), [HOST]);
  });

  /** Runs `during` between the listing of hosts/ (the names are already read) and its use. */
  function hookHostsListing(callbacks: { before?: () => Promise<unknown>; after?: () => Promise<unknown> }): () => void {
    type Readdir = (path: string, ...rest: unknown[]) => Promise<string[]>;
    return hookFsPromises<Readdir>('readdir', (original) => async (path, ...rest) => {
      if (!String(path).endsWith('/hosts')) return original(path, ...rest);
      await callbacks.before?.();
      const names = await original(path, ...rest);
      await callbacks.after?.();
      return names;
    });
  }

  test('a lease taken while verify was listing is not reported lost', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    await a.acquire('h1.example');
    const restore = hookHostsListing({ after: () => a.acquire('h3.example') });
    let lost: string[];
    try {
      lost = await a.verify('all');
    } finally {
      restore();
    }
    assert.deepEqual(lost, []);
    assert.equal(a.holds('h3.example'), true);
    assert.ok((await stat(layout.lease('h3.example'))).isFile());
  });

  test('a lease being released while verify lists (moved aside, not yet forgotten) is not reported lost', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    await a.acquire('h1.example');
    await a.acquire('h2.example');
    // The release has moved h1's lease aside and waits to remove it while hosts/ is listed and
    // the listing used: a hand-over's release racing the heartbeat's check (it cost a full reseed).
    let reachedRemoval!: () => void;
    const atRemoval = new Promise<void>((r) => (reachedRemoval = r));
    let finishRemoval!: () => void;
    const removalMayFinish = new Promise<void>((r) => (finishRemoval = r));
    type Unlink = (path: string, done: (err: NodeJS.ErrnoException | null) => void) => void;
    const restoreUnlink = hookFs<Unlink>('unlink', (original) => (path, done) => {
      if (!String(path).includes('h1.example.lease')) return original(path, done);
      reachedRemoval();
      void removalMayFinish.then(() => original(path, done));
    });
    let releasing: Promise<void> | undefined;
    const restoreListing = hookHostsListing({
      before: async () => {
        releasing = a.release('h1.example');
        await atRemoval;
      },
    });
    let lost: string[];
    try {
      lost = await a.verify('all');
    } finally {
      restoreListing();
      finishRemoval();
      await releasing;
      restoreUnlink();
    }
    assert.deepEqual(lost, []);
    assert.equal(a.holds('h1.example'), false, 'released');
    assert.equal(a.holds('h2.example'), true);
    assert.equal(await readLease(layout, 'h1.example'), undefined);
  });

  test('a lease released and taken again while verify was listing is not reported lost', async () => {
    const layout = await freshLayout();
    const a = new Leases(layout, A, alive);
    await a.acquire('h1.example');
    await a.acquire('h2.example');
    // The listing misses h1's lease (released just before), and h1 is held again (a new token)
    // by the time the listing is used.
    const restore = hookHostsListing({
      before: () => a.release('h1.example'),
      after: () => a.acquire('h1.example'),
    });
    let lost: string[];
    try {
      lost = await a.verify('all');
    } finally {
      restore();
    }
    assert.deepEqual(lost, []);
    assert.equal(a.holds('h1.example'), true);
    assert.equal(a.holds('h2.example'), true);
  });
});
