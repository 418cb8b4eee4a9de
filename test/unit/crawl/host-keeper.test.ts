import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { Leases } from '../../../src/cluster/lease.js';
import { Membership } from '../../../src/cluster/membership.js';
import { Ownership } from '../../../src/cluster/ownership.js';
import type { CrawlConfig } from '../../../src/config/crawl-config.js';
import { BORROWED_RETRY_MS, HostKeeper, TAKE_PARALLELISM } from '../../../src/crawl/host-keeper.js';
import { HostRobots } from '../../../src/crawl/host-robots.js';
import { RobotsCache } from '../../../src/fetch/robots.js';
import { fetchMiddleware } from '../../../src/hooks/builtin-steps.js';
import { silentLogger } from '../../../src/progress/logger.js';
import { openDataDir } from '../../../src/store/data-dir.js';
import { HostStore } from '../../../src/store/host-store.js';
import { RECORD_VERSION } from '../../../src/store/records.js';
import { urlKey } from '../../../src/url/key.js';
import { type Answer, fakeFetcher } from '../../support/fake-fetcher.js';
import { frontierRig } from '../../support/frontier-rig.js';
import { freshPaths } from '../../support/temp-paths.js';

const freshPath = freshPaths('mountcrawl-keeper-');

const A = 'a.example';

async function keeperRig(
  site: Record<string, Answer | Answer[]>,
  over: Partial<CrawlConfig> = {},
  ownership = new Ownership('n1', 'host'),
  summaries?: { taken(hostDir: string, records: number): void; forget(hostDir: string, write: boolean): Promise<void> },
) {
  const r = frontierRig({ retryBaseMs: 1_000, retryMaxMs: 60_000, maxAttempts: 3, ...over });
  const { layout } = await openDataDir(freshPath(), 'n1');
  const store = new HostStore(layout, { nodeId: 'n1', fsync: false });
  const membership = new Membership(layout, r.cfg, { clock: r.clock });
  const leases = new Leases(layout, 'n1', () => false);
  const { fetcher, asked } = fakeFetcher(site);
  const robots = new RobotsCache(layout, { userAgent: 'test', maxAgeMs: 60_000, nodeId: 'n1', fsync: false }, r.clock);
  const errors: unknown[] = [];
  const unsettled: string[] = [];
  const markedRead: string[] = [];
  let fullAsked = 0;
  const keeper = new HostKeeper({
    config: r.cfg,
    clock: r.clock,
    log: silentLogger,
    stats: r.stats,
    ownership,
    membership,
    leases,
    store,
    robots,
    frontier: r.frontier,
    onStoreError: (err) => errors.push(err),
    wake: () => undefined,
    reseeder: {
      unsettle: (hostDir) => void unsettled.push(hostDir),
      markRead: (hostDir, key) => void markedRead.push(`${hostDir}/${key}`),
      wantFull: () => void fullAsked++,
    },
    summaries,
  });
  r.onHostWanted((host) => keeper.hostWanted(host));
  const hostRobots = new HostRobots({
    config: r.cfg,
    clock: r.clock,
    log: silentLogger,
    stats: r.stats,
    store,
    robots,
    pipeline: {
      fetcher,
      middleware: fetchMiddleware(
        r.cfg.userAgent,
        () => true,
        () => r.clock.now(),
      ),
    },
    frontier: r.frontier,
    onStoreError: (err) => errors.push(err),
    wake: () => undefined,
    fenced: () => false,
  });
  return { ...r, layout, store, leases, keeper, hostRobots, asked, errors, unsettled, markedRead, fullAsked: () => fullAsked };
}

/** Makes each lease acquisition take 5 ms, as over a network mount; counts the calls and the most under way at once. */
function slowAcquire(leases: Leases): { calls: number; most: number } {
  const seen = { calls: 0, most: 0 };
  let inFlight = 0;
  const acquire = leases.acquire.bind(leases);
  leases.acquire = async (dir) => {
    seen.calls++;
    inFlight++;
    seen.most = Math.max(seen.most, inFlight);
    await new Promise((resolve) => setTimeout(resolve, 5));
    try {
      return await acquire(dir);
    } finally {
      inFlight--;
    }
  };
  return seen;
}

describe('HostKeeper', () => {
  test('a wanted host is taken: its lease, its listing (done set), then it is ready', async () => {
    const r = await keeperRig({});
    const done = `http://${A}/done`;
    await r.store.writePage(A, urlKey(done), null, {
      v: RECORD_VERSION,
      url: done,
      depth: 0,
      status: 200,
      fetchedAt: new Date(r.clock.now()).toISOString(),
      node: 'n1',
      links: [],
    } as never);
    const host = r.admission.want(A, `http://${A}/`);
    assert.equal(host.phase, 'acquiring');
    assert.equal(host.origin, `http://${A}`);
    await r.keeper.allLoaded(); // every host of the frontier: this one
    assert.equal(host.phase, 'ready');
    assert.deepEqual([...r.leases.held()], [A]);
    assert.equal(host.isDone(urlKey(done)), true);
    assert.equal(r.admission.want(A), host, 'one state per host');
    assert.deepEqual(r.errors, []);
  });

  test('hosts are taken a few at a time: the first are ready before the last are taken, and one let go while waiting takes no lease', async () => {
    const r = await keeperRig({});
    const acquiring = slowAcquire(r.leases);
    const hosts = Array.from({ length: 3 * TAKE_PARALLELISM }, (_, i) => r.admission.want(`h${i}.example`, `http://h${i}.example/`));
    const last = hosts.at(-1)!;
    await r.keeper.letGo(last, 'moved');
    await r.keeper.loaded(hosts[0]!);
    assert.equal(hosts[0]!.phase, 'ready');
    assert.equal(hosts[2 * TAKE_PARALLELISM]!.phase, 'acquiring', 'a host of the third batch waits for its turn');
    await Promise.all(hosts.map((h) => r.keeper.loaded(h)));
    assert.equal(acquiring.most, TAKE_PARALLELISM);
    assert.ok(hosts.slice(0, -1).every((h) => h.phase === 'ready'));
    assert.equal(r.leases.holds(last.dir), false);
    assert.equal([...r.leases.held()].length, hosts.length - 1);
    assert.deepEqual(r.errors, []);
  });

  test('close: takes waiting for their turn are dropped and those under way end, so no lease is taken after the exit releases them', async () => {
    const r = await keeperRig({});
    const acquiring = slowAcquire(r.leases);
    const hosts = Array.from({ length: 3 * TAKE_PARALLELISM }, (_, i) => r.admission.want(`h${i}.example`, `http://h${i}.example/`));
    await r.keeper.close(5_000);
    assert.equal(acquiring.calls, TAKE_PARALLELISM, 'only the takes under way took a lease');
    await r.leases.releaseAll();
    await Promise.all(hosts.map((h) => r.keeper.loaded(h)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(acquiring.calls, TAKE_PARALLELISM);
    assert.deepEqual([...r.leases.held()], []);
    assert.deepEqual(r.errors, []);
  });

  test("a borrowed host's records are marked read at take (its lender sent their links on); an own host's are not", async () => {
    const ownership = new Ownership('n1', 'host');
    ownership.setLive(['n1', 'n2']);
    const dirs = Array.from({ length: 40 }, (_, i) => `h${i}.example`);
    const lent = dirs.find((d) => ownership.rendezvousOwner(d) === 'n2')!;
    const own = dirs.find((d) => ownership.rendezvousOwner(d) === 'n1')!;
    ownership.setPeerLends([{ id: 'n2', counter: 1, lent: { [lent]: 'n1' } }]);
    assert.equal(ownership.ownsHost(lent), true);
    const r = await keeperRig({}, {}, ownership);
    for (const dir of [lent, own]) {
      const url = `http://${dir}/done`;
      await r.store.writePage(dir, urlKey(url), null, {
        v: RECORD_VERSION,
        url,
        depth: 0,
        status: 200,
        fetchedAt: new Date(r.clock.now()).toISOString(),
        node: 'n2',
        links: [],
      } as never);
      const host = r.admission.want(dir, `http://${dir}/`);
      await r.keeper.loaded(host);
      assert.equal(host.phase, 'ready');
      assert.equal(host.isDone(urlKey(url)), true);
    }
    assert.deepEqual(r.markedRead, [`${lent}/${urlKey(`http://${lent}/done`)}`]);
  });

  test('a borrowed host whose lender still holds the lease is tried again within a heartbeat; a host of its own waits for the heartbeat', async () => {
    const ownership = new Ownership('n1', 'host');
    ownership.setLive(['n1', 'n2']);
    const dirs = Array.from({ length: 40 }, (_, i) => `h${i}.example`);
    const lent = dirs.find((d) => ownership.rendezvousOwner(d) === 'n2')!;
    const own = dirs.find((d) => ownership.rendezvousOwner(d) === 'n1')!;
    ownership.setPeerLends([{ id: 'n2', counter: 1, lent: { [lent]: 'n1' } }]);
    const r = await keeperRig({}, {}, ownership);
    // The lender (n2, alive) still holds both leases: its requests in flight have not ended.
    let held = true;
    const acquire = r.leases.acquire.bind(r.leases);
    r.leases.acquire = (dir) => (held ? Promise.resolve({ ok: false, holder: 'n2' } as never) : acquire(dir));
    const hosts = [lent, own].map((dir) => r.admission.want(dir, `http://${dir}/`));
    for (const h of hosts) await r.keeper.loaded(h);
    assert.deepEqual(
      hosts.map((h) => h.phase),
      ['blocked', 'blocked'],
    );
    held = false;
    r.clock.advance(BORROWED_RETRY_MS);
    for (const h of hosts) await r.keeper.loaded(h);
    assert.deepEqual(
      hosts.map((h) => h.phase),
      ['ready', 'blocked'],
      'the borrowed host is taken at once; the own one at the next heartbeat (retryBlocked)',
    );
  });

  test('robots.txt read from the mount sends nothing: the first page may start at once; fetched, it takes its turn (--delay)', async () => {
    for (const onMount of [true, false]) {
      const r = await keeperRig({ [`http://${A}/robots.txt`]: [200, {}, 'User-agent: *\nAllow: /\n'] }, { delayMs: 5_000 });
      if (onMount) {
        const cache = new RobotsCache(r.layout, { userAgent: 'test', maxAgeMs: 60_000, nodeId: 'n1', fsync: false }, r.clock);
        await cache.store(A, `http://${A}/robots.txt`, 200, 'User-agent: *\nAllow: /\n');
      }
      r.admission.offer(`http://${A}/1`, A, 0);
      const host = r.frontier.hosts.get(A)!;
      await r.keeper.loaded(host);
      r.clock.advance(10_000); // the host's first request: no gap before it
      await r.hostRobots.fetch(host);
      const now = r.clock.monotonic();
      assert.notEqual(host.robots, undefined);
      assert.equal(r.asked.filter((u) => u.endsWith('/robots.txt')).length, onMount ? 0 : 1);
      if (onMount) assert.deepEqual(r.runner.started, [`http://${A}/1`], 'read from the mount: the first page starts at once');
      else {
        assert.deepEqual(r.runner.started, [], 'fetched: the first page waits its turn');
        assert.equal(host.politeness.nextStartAt(now), now + 5_000);
      }
    }
  });

  test('robots.txt unavailable: the host waits with the back-off, then is left alone and its URLs recorded, those that come later at the exit', async () => {
    const r = await keeperRig({ [`http://${A}/robots.txt`]: [503, {}] }, { maxAttempts: 2 });
    r.admission.offer(`http://${A}/1`, A, 0);
    const host = r.frontier.hosts.get(A)!;
    await r.keeper.loaded(host);
    await r.hostRobots.fetch(host);
    assert.equal(host.robotsFailures, 1);
    assert.equal(host.robotsRetryAt, r.clock.monotonic() + 1_000, 'base back-off');
    assert.equal(host.gaveUp, false);
    await r.hostRobots.fetch(host);
    assert.equal(host.gaveUp, true, '--max-attempts 2 reached');
    assert.equal(r.stats.cut.hostGaveUp, 1);
    assert.equal(host.isClaimed(urlKey(`http://${A}/1`)), false);
    assert.equal(r.frontier.queued, 0);
    assert.equal(r.asked.filter((u) => u.endsWith('/robots.txt')).length, 2);
    // A link that comes after the give-up is set aside, and recorded at the exit as the others were.
    const later = `http://${A}/later`;
    r.admission.offer(later, A, 1);
    assert.equal(host.isClaimed(urlKey(later)), true, 'set aside, claimed');
    const errsOf = (url: string) =>
      readFile(r.layout.errs(A, urlKey(url)), 'utf8').then((t) => JSON.parse(t) as { url: string; message: string });
    await assert.rejects(errsOf(later), { code: 'ENOENT' }, 'in no record yet: only in memory');
    assert.equal(await r.hostRobots.recordSetAside(), true);
    for (const url of [`http://${A}/1`, later]) {
      const record = await errsOf(url);
      assert.equal(record.url, url);
      assert.match(record.message, /^robots\.txt unavailable/);
    }
    assert.equal(await r.hostRobots.recordSetAside(), true, 'nothing left to record: true again');
  });

  test('robots.txt unavailable while the mount fails under the records: the URLs go back in the queue, the host is not left alone, and a later give-up records them', async () => {
    const r = await keeperRig({ [`http://${A}/robots.txt`]: [503, {}] }, { maxAttempts: 2 });
    r.admission.offer(`http://${A}/1`, A, 0);
    r.admission.offer(`http://${A}/2`, A, 0);
    const host = r.frontier.hosts.get(A)!;
    await r.keeper.loaded(host);
    await r.hostRobots.fetch(host);
    const writeErrs = r.store.writeErrs.bind(r.store);
    let writes = 0;
    r.store.writeErrs = async (...args) => {
      // A link found meanwhile is set aside for the host (left alone by then)...
      if (writes === 0) assert.equal(r.admission.offer(`http://${A}/3`, A, 1), 'known');
      if (++writes === 2) throw Object.assign(new Error('EIO: simulated'), { code: 'EIO' });
      return writeErrs(...args);
    };
    await r.hostRobots.fetch(host);
    assert.equal(host.gaveUp, false, 'not left alone: its URLs are not all recorded');
    assert.equal(r.frontier.queued, 3, 'both URLs are queued again, and the link set aside meanwhile');
    assert.equal(host.isClaimed(urlKey(`http://${A}/2`)), true);
    assert.equal(r.stats.cut.hostGaveUp, 0);
    assert.equal((r.errors[0] as NodeJS.ErrnoException).code, 'EIO', 'the fault goes to the mount-fault handling');
    await r.hostRobots.fetch(host);
    assert.equal(host.gaveUp, true, 'robots.txt asked for again, still unavailable');
    assert.equal(r.frontier.queued, 0);
    assert.equal(r.stats.cut.hostGaveUp, 1);
    const recorded = await r.store.listHost(A, () => false);
    assert.deepEqual([...recorded.errs.keys()].sort(), [urlKey(`http://${A}/1`), urlKey(`http://${A}/2`), urlKey(`http://${A}/3`)].sort());
  });

  test('a host that moved is let go after its requests in flight end; then its lease is released', async () => {
    const r = await keeperRig({});
    const host = r.admission.want(A, `http://${A}/`);
    await r.keeper.loaded(host);
    host.beginRequest(r.clock.monotonic());
    r.keeper.letGo(host, 'moved');
    assert.equal(host.phase, 'releasing');
    assert.deepEqual([...r.leases.held()], [A], 'held while a request is in flight');
    host.endRequest('ok');
    for (let i = 0; i < 2_000 && r.frontier.hosts.has(A); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(r.frontier.hosts.has(A), false);
    assert.deepEqual([...r.leases.held()], []);
    assert.deepEqual(r.unsettled, [A], 'the reseeds must list the directory of a host let go again');
  });

  test("a host let go keeps its lease until its summary is written: the heartbeat's release of leases no host needs leaves it alone", async () => {
    let written!: () => void;
    const writes: string[] = [];
    const summaries = {
      taken: (hostDir: string, records: number) => void writes.push(`${hostDir} taken with ${records}`),
      forget: (hostDir: string, write: boolean) => {
        writes.push(`${hostDir} ${write}`);
        return new Promise<void>((resolve) => (written = resolve));
      },
    };
    const r = await keeperRig({}, {}, new Ownership('n1', 'host'), summaries);
    const host = r.admission.want(A, `http://${A}/`);
    await r.keeper.loaded(host);
    const gone = r.keeper.letGo(host, 'moved');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(writes, [`${A} taken with 0`, `${A} true`], 'the writer knew the records at the take; the summary is being written');
    await r.keeper.releaseOrphanLeases();
    assert.deepEqual(
      [...r.leases.held()],
      [A],
      'the next owner reads a summary written before the release (docs/protocol.md, "Host summaries")',
    );
    written();
    await gone;
    assert.deepEqual([...r.leases.held()], []);
    assert.equal(r.frontier.hosts.has(A), false);
  });

  test('a lease found lost drops the host and its queue, and asks at once for a full reseed (docs/protocol.md, "Who crawls what")', async () => {
    const r = await keeperRig({});
    const host = r.admission.want(A, `http://${A}/`);
    await r.keeper.loaded(host);
    r.keeper.dropLost(['other.example']);
    assert.equal(r.fullAsked(), 0, 'a host this node does not hold drops nothing');
    assert.equal(r.admission.offer(`http://${A}/p1`, A, 1), 'queued');
    r.keeper.dropLost([A]);
    assert.equal(host.phase, 'releasing');
    assert.equal(r.frontier.queued, 0, 'the queue left memory');
    assert.equal(r.fullAsked(), 1);
  });
});
