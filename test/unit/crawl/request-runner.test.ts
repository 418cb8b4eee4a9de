import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ownership } from '../../../src/cluster/ownership.js';
import { HostKeeper } from '../../../src/crawl/host-keeper.js';
import type { HostRobots } from '../../../src/crawl/host-robots.js';
import { fetchMiddleware } from '../../../src/hooks/builtin-steps.js';
import { RequestRunner } from '../../../src/crawl/request-runner.js';
import { urlKey } from '../../../src/url/key.js';
import { DEFAULT_NORMALIZE_OPTIONS } from '../../../src/url/normalize.js';
import { committerRig } from '../../support/committer-rig.js';
import { type Answer, fakeFetcher } from '../../support/fake-fetcher.js';
import { frontierRig } from '../../support/frontier-rig.js';

let root: string;
let n = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mountcrawl-runner-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

const A = 'a.example';

/** The runner with its real parts (committer, store) around a fake fetcher; the rig's pump is the runner's. */
async function runnerRig(
  site: Record<string, Answer | Answer[]>,
  o: { filter?: (url: string) => boolean; onStoreError?: (err: unknown) => void; mayStart?: () => boolean; perHost?: number } = {},
) {
  const { filter, onStoreError, mayStart = () => true } = o;
  const r = frontierRig(
    { retryBaseMs: 1_000, maxAttempts: 3, ...(o.perHost === undefined ? {} : { perHost: o.perHost }) },
    filter ? { filter } : {},
  );
  const { store, committer } = await committerRig(r, join(root, `d${n++}`));
  const { fetcher, asked } = fakeFetcher(site);
  const keeper = {} as HostKeeper; // fetches no robots.txt here: the rig's hosts know theirs
  let idle = 0;
  const runner = new RequestRunner({
    config: r.cfg,
    clock: r.clock,
    stats: r.stats,
    fetcher,
    admission: r.admission,
    ownership: new Ownership('n1', 'host'),
    normalize: DEFAULT_NORMALIZE_OPTIONS,
    store,
    committer,
    keeper,
    frontier: r.frontier,
    abort: new AbortController(),
    control: {
      mayStart,
      fenced: () => false,
      stopping: () => false,
      onStoreError: onStoreError ?? ((err) => assert.fail(String(err))),
      wake: () => idle++,
    },
    middleware: fetchMiddleware(
      r.cfg.userAgent,
      (hostDir, url) => r.frontier.hosts.get(hostDir)?.robots?.isAllowed(url) ?? true,
      () => r.clock.now(),
    ),
    // The hosts of these tests are made ready with their robots.txt known (frontierRig).
    hostRobots: { fetch: async () => assert.fail('no robots.txt is fetched here') } as unknown as HostRobots,
  });
  r.usePump(() => runner.pump());
  /** Runs until nothing is in flight or queued. */
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 1_000 && (runner.inFlight > 0 || r.frontier.queued > 0); i++) {
      runner.pump();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await runner.drain(Infinity);
  };
  return { ...r, store, runner, asked, settle, idle: () => idle };
}

describe('RequestRunner', () => {
  test('pump starts what the frontier gives, fetches, commits, and follows links of the same host', async () => {
    const r = await runnerRig({
      [`http://${A}/`]: [200, {}, '<a href="/b">b</a>'],
      [`http://${A}/b`]: [200, {}, '<p>b</p>'],
    });
    r.admission.offer(`http://${A}/`, A, 0);
    r.ready(A);
    await r.settle();
    assert.deepEqual(r.asked.sort(), [`http://${A}/`, `http://${A}/b`]);
    assert.equal(r.stats.pages, 2);
    assert.equal(r.runner.fetched, 2);
    assert.equal(r.runner.inFlight, 0);
    assert.ok(r.idle() > 0, 'the node is told when nothing is left');
    assert.equal(await r.store.hasLinks(A, urlKey(`http://${A}/b`)), true);
  });

  test('a page whose commit the mount refused is kept, with its host slot, and written when the mount is back, not fetched again', async () => {
    const faults: unknown[] = [];
    const r = await runnerRig({ [`http://${A}/`]: [200, {}, '<p>a</p>'] }, { onStoreError: (err) => faults.push(err) });
    const writePage = r.store.writePage.bind(r.store);
    let refuse = true;
    r.store.writePage = async (...args: Parameters<typeof writePage>) => {
      if (refuse) throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
      return writePage(...args);
    };
    r.admission.offer(`http://${A}/`, A, 0);
    r.ready(A);
    await r.settle();
    assert.equal(faults.length, 1, 'the fault reached the node');
    assert.equal(r.runner.unwritten, 1);
    assert.equal(r.frontier.queued, 0, 'not queued again');
    assert.equal(r.stats.pages, 0);
    // The page keeps its host's slot: a host let go meanwhile releases its lease only after it is written.
    const host = r.frontier.hosts.get(A)!;
    assert.equal(host.inFlight, 1, 'the slot is held');
    let idle = false;
    host.whenIdle(() => (idle = true));
    await assert.rejects(r.runner.commitUnwritten(), /EIO/, 'still failing: kept');
    assert.equal(r.runner.unwritten, 1);
    assert.equal(idle, false);
    refuse = false;
    await r.runner.commitUnwritten();
    assert.equal(r.runner.unwritten, 0);
    assert.equal(idle, true, 'the slot is given back once the page is written');
    assert.equal(r.stats.pages, 1);
    assert.equal(await r.store.hasLinks(A, urlKey(`http://${A}/`)), true);
    await r.settle();
    assert.deepEqual(r.asked, [`http://${A}/`], 'fetched once');
  });

  test('a failed commit reaches the node before the next request may start: nothing more is fetched to be left unwritten', async () => {
    let fault = false;
    const r = await runnerRig(
      { [`http://${A}/`]: [200, {}, '<p>a</p>'], [`http://${A}/b`]: [200, {}, '<p>b</p>'] },
      // As the node: no request starts while the mount is failing. One request per host: /b may start only once / ended.
      { onStoreError: () => (fault = true), mayStart: () => !fault, perHost: 1 },
    );
    r.store.writePage = async () => {
      throw Object.assign(new Error('EIO: i/o error, open'), { code: 'EIO' });
    };
    r.admission.offer(`http://${A}/`, A, 0);
    r.admission.offer(`http://${A}/b`, A, 0);
    r.ready(A);
    r.runner.pump();
    await r.runner.drain(Infinity);
    assert.equal(fault, true);
    assert.deepEqual(r.asked, [`http://${A}/`], '/b was not started after the failed commit');
    assert.equal(r.runner.unwritten, 1, 'the page fetched is kept');
  });

  test('a redirect target goes through the admission chain: one the --hook filter rejects is not fetched', async () => {
    const r = await runnerRig(
      {
        [`http://${A}/go`]: [302, { location: '/blocked' }],
        [`http://${A}/blocked`]: [200, {}, '<p>no</p>'],
        [`http://${A}/ok`]: [302, { location: '/fine' }],
        [`http://${A}/fine`]: [200, {}, '<p>yes</p>'],
      },
      { filter: (url) => !url.endsWith('/blocked') },
    );
    r.admission.offer(`http://${A}/go`, A, 0);
    r.admission.offer(`http://${A}/ok`, A, 0);
    r.ready(A);
    await r.settle();
    assert.equal(r.asked.includes(`http://${A}/blocked`), false);
    assert.equal(r.asked.includes(`http://${A}/fine`), true);
    const host = r.frontier.hosts.get(A)!;
    assert.equal(host.isDone(urlKey(`http://${A}/go`)), true, 'the redirect itself is recorded');
    assert.equal(host.isKnown(urlKey(`http://${A}/blocked`)), false, 'its target is neither fetched nor claimed');
  });

  test('a transient failure is retried at its time (fake clock), then stored', async () => {
    const flaky = `http://${A}/flaky`;
    const r = await runnerRig({
      [flaky]: [
        [503, {}],
        [200, {}, '<p>ok</p>'],
      ],
    });
    r.admission.offer(flaky, A, 0);
    r.ready(A);
    await r.settle();
    const host = r.frontier.hosts.get(A)!;
    assert.equal(host.errsOf(urlKey(flaky))?.attempts, 1);
    assert.equal(host.isClaimed(urlKey(flaky)), true, 'claimed while it waits');
    r.clock.advance(999);
    await r.settle();
    assert.equal(r.asked.length, 1, 'not before the back-off');
    r.clock.advance(1);
    await r.settle();
    assert.equal(r.asked.length, 2);
    assert.equal(host.isDone(urlKey(flaky)), true);
    assert.equal(host.errsOf(urlKey(flaky)), undefined);
  });
});
