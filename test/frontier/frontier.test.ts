import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ownership } from '../../src/cluster/ownership.js';
import { DEFAULTS, type CrawlConfig } from '../../src/config/crawl-config.js';
import { Frontier, type Starter } from '../../src/frontier/frontier.js';
import { HostState, type QueueItem } from '../../src/frontier/host-state.js';
import { ALLOW_ALL } from '../../src/fetch/robots.js';
import { ScopeFilter } from '../../src/frontier/scope.js';
import { CrawlStats } from '../../src/progress/stats.js';
import { DEFAULT_NORMALIZE_OPTIONS } from '../../src/url/normalize.js';
import { FakeClock } from '../support/fake-clock.js';

const A = 'a.example';
const B = 'b.example';

function config(over: Partial<CrawlConfig> = {}): CrawlConfig {
  return {
    ...DEFAULTS,
    dataDir: '/nowhere',
    seedUrls: [],
    include: [],
    exclude: [],
    userAgent: 'test',
    nodeId: 'n1',
    progress: false,
    json: false,
    normalize: DEFAULT_NORMALIZE_OPTIONS,
    sessionParamsExplicit: false,
    robots: true,
    insecure: false,
    denyPrivate: false,
    fsync: false,
    watch: false,
    delayMs: 0,
    perHost: 2,
    ...over,
  } as CrawlConfig;
}

/** A starter that records what it is asked, with room for `room` requests. */
class FakeStarter implements Starter {
  started: string[] = [];
  robots: string[] = [];
  room = Infinity;
  wakes = 0;
  mayStart(): boolean {
    return this.started.length < this.room;
  }
  start(host: HostState, item: QueueItem, now: number): void {
    this.started.push(item.url);
    host.politeness.started(now);
  }
  fetchRobots(host: HostState): void {
    this.robots.push(host.dir);
  }
  wake(): void {
    this.wakes++;
  }
}

function setup(over: Partial<CrawlConfig> = {}, seeds: string[] = [A, B]) {
  const cfg = config(over);
  const clock = new FakeClock();
  const stats = new CrawlStats(() => clock.monotonic());
  const scope = new ScopeFilter('host', cfg.include, cfg.exclude);
  for (const s of seeds) scope.addSeed(s);
  const ownership = new Ownership('n1', 'host');
  const starter = new FakeStarter();
  const adopted: string[] = [];
  const frontier: Frontier = new Frontier({
    config: cfg,
    clock,
    stats,
    scope,
    ownership,
    adopt: (hostDir) => {
      adopted.push(hostDir);
      const host = new HostState(hostDir, cfg);
      frontier.hosts.set(hostDir, host);
      return host;
    },
    starter,
  });
  /** Makes a host ready to send (as HostKeeper does after its lease, listing and robots.txt). */
  const ready = (hostDir: string): HostState => {
    const host = frontier.hosts.get(hostDir)!;
    host.phase = 'ready';
    host.robots = ALLOW_ALL;
    frontier.schedule(host);
    return host;
  };
  return { frontier, starter, stats, clock, adopted, ready };
}

describe('Frontier.offer', () => {
  test('queues a URL once; the host is adopted on first sight', () => {
    const { frontier, adopted } = setup();
    assert.equal(frontier.offer(`http://${A}/x`, A, 1), 'queued');
    assert.equal(frontier.offer(`http://${A}/x`, A, 1), 'known', 'claimed already');
    assert.deepEqual(adopted, [A]);
    assert.equal(frontier.queued, 1);
  });

  test('cuts what is too deep, out of scope, a trap, over a budget, and counts it', () => {
    const { frontier, stats } = setup({ maxDepth: 2, maxPagesPerHost: 3, maxPagesPerPattern: 2 });
    assert.equal(frontier.offer(`http://${A}/deep`, A, 3), 'known');
    assert.equal(stats.cut.depth, 1);
    assert.equal(frontier.wantsHost('c.example'), false, 'not a seed host: callers do not offer its URLs');
    assert.equal(frontier.offer(`http://${A}/r/r/r/`, A, 1), 'known');
    assert.equal(stats.cut.repeatedSegment, 1);
    assert.equal(frontier.offer(`http://${A}/cal/1`, A, 1), 'queued');
    assert.equal(frontier.offer(`http://${A}/cal/2`, A, 1), 'queued');
    assert.equal(frontier.offer(`http://${A}/cal/3`, A, 1), 'known', 'over --max-pages-per-pattern');
    assert.equal(stats.cut.patternBudget, 1);
    assert.equal(frontier.offer(`http://${A}/other`, A, 1), 'queued');
    assert.equal(frontier.offer(`http://${A}/more`, A, 1), 'known', 'over --max-pages-per-host');
    assert.equal(stats.cut.hostBudget, 1);
  });

  test("a full frontier answers 'full' (the URL stays on disk) and counts it", () => {
    const { frontier, stats } = setup({ frontierCap: 2 });
    frontier.offer(`http://${A}/1`, A, 1);
    frontier.offer(`http://${A}/2`, A, 1);
    assert.equal(frontier.offer(`http://${A}/3`, A, 1), 'full');
    assert.equal(stats.cut.frontierFull, 1);
    assert.equal(frontier.queued, 2);
  });

  test('a --hook filter that says no keeps the URL out', () => {
    const cfg = config();
    const clock = new FakeClock();
    const scope = new ScopeFilter('any', [], []);
    const frontier: Frontier = new Frontier({
      config: cfg,
      clock,
      stats: new CrawlStats(() => clock.monotonic()),
      scope,
      ownership: new Ownership('n1', 'host'),
      filter: (url) => !url.endsWith('/no'),
      adopt: (hostDir) => {
        const h = new HostState(hostDir, cfg);
        frontier.hosts.set(hostDir, h);
        return h;
      },
      starter: new FakeStarter(),
    });
    assert.equal(frontier.offer(`http://${A}/no`, A, 0), 'known');
    assert.equal(frontier.offer(`http://${A}/yes`, A, 0), 'queued');
  });
});

describe('Frontier.pump', () => {
  test('nothing starts before the host is ready (lease, listing)', () => {
    const { frontier, starter } = setup();
    frontier.offer(`http://${A}/1`, A, 0);
    frontier.pump();
    assert.deepEqual(starter.started, []);
  });

  test('round robin over ready hosts, within --per-host', () => {
    const { frontier, starter, ready } = setup({ perHost: 1 });
    for (let i = 0; i < 3; i++) frontier.offer(`http://${A}/${i}`, A, 1);
    for (let i = 0; i < 3; i++) frontier.offer(`http://${B}/${i}`, B, 1);
    ready(A);
    ready(B);
    assert.deepEqual(starter.started, [`http://${A}/0`, `http://${B}/0`], 'one each: --per-host 1');
  });

  test('stops when the starter has no room', () => {
    const { frontier, starter, ready } = setup({ perHost: 8 });
    starter.room = 2;
    for (let i = 0; i < 5; i++) frontier.offer(`http://${A}/${i}`, A, 1);
    ready(A);
    assert.equal(starter.started.length, 2);
    assert.equal(frontier.queued, 3);
  });

  test('a host whose robots.txt is loading is not asked for it again (no busy loop)', () => {
    const { frontier, starter } = setup();
    frontier.offer(`http://${A}/1`, A, 0);
    const host = frontier.hosts.get(A)!;
    host.phase = 'ready';
    frontier.schedule(host);
    assert.deepEqual(starter.robots, [A]);
    host.robotsLoading = true;
    for (let i = 0; i < 5; i++) frontier.schedule(host);
    assert.deepEqual(starter.robots, [A], 'asked once while loading');
    assert.deepEqual(starter.started, []);
    host.robotsLoading = false;
    host.robots = ALLOW_ALL;
    frontier.schedule(host);
    assert.deepEqual(starter.started, [`http://${A}/1`]);
  });

  test('a host paused by politeness is woken at its time', async () => {
    const { frontier, starter, ready } = setup({ delayMs: 30, perHost: 4 });
    frontier.offer(`http://${A}/1`, A, 0);
    frontier.offer(`http://${A}/2`, A, 0);
    const host = ready(A);
    assert.deepEqual(starter.started, [`http://${A}/1`], 'the second waits for --delay');
    // The fake clock stands still, so move it; the wake-up timer itself is real.
    (host as unknown as { politeness: { hopStarted(n: number): void } }).politeness.hopStarted(-1_000);
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(starter.started, [`http://${A}/1`, `http://${A}/2`]);
    frontier.close();
  });
});

describe('Frontier retries and hosts let go', () => {
  test('a retry is queued again at its time and wakes the loop', async () => {
    const { frontier, starter, clock, ready } = setup();
    frontier.offer(`http://${A}/1`, A, 0);
    const host = ready(A);
    starter.started = [];
    frontier.addRetry(host, { url: `http://${A}/flaky`, key: 'k1', depth: 1 }, clock.monotonic() + 20);
    assert.equal(frontier.nextRetryAt(), clock.monotonic() + 20);
    assert.equal(host.claimed.has('k1'), true);
    clock.advance(25);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(starter.started, [`http://${A}/flaky`]);
    assert.ok(starter.wakes > 0);
    frontier.close();
  });

  test('dropHost empties queue and retries and gives them back', () => {
    const { frontier, clock } = setup();
    frontier.offer(`http://${A}/1`, A, 0);
    frontier.offer(`http://${A}/2`, A, 0);
    const host = frontier.hosts.get(A)!;
    frontier.addRetry(host, { url: `http://${A}/r`, key: 'kr', depth: 1 }, clock.monotonic() + 10_000);
    const dropped = frontier.dropHost(host);
    assert.deepEqual(dropped.map((i) => i.url).sort(), [`http://${A}/1`, `http://${A}/2`, `http://${A}/r`]);
    assert.equal(frontier.queued, 0);
    assert.equal(host.claimed.size, 0);
    assert.equal(frontier.nextRetryAt(), Infinity);
  });
});
