import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { urlKey } from '../../../../src/url/key.js';
import { frontierRig } from '../../../support/frontier-rig.js';

const A = 'a.example';

describe('Admission.offer: links and seeds', () => {
  test('queues a URL once; the host is adopted on first sight', () => {
    const { admission, frontier, adopted } = frontierRig();
    assert.equal(admission.offer(`http://${A}/x`, A, 1), 'queued');
    assert.equal(admission.offer(`http://${A}/x`, A, 1), 'known', 'claimed already');
    assert.deepEqual(adopted, [A]);
    assert.equal(frontier.queued, 1);
  });

  test('want makes a host once and says it is wanted once (the listener takes it); no I/O of its own', () => {
    const { admission, frontier, adopted } = frontierRig();
    const host = admission.want(A, `http://${A}/x`);
    assert.equal(host.origin, `http://${A}`);
    assert.equal(host.phase, 'acquiring', 'nothing took it: the rig only records the wish');
    assert.equal(admission.want(A), host);
    assert.equal(admission.offer(`http://${A}/y`, A, 1), 'queued');
    assert.deepEqual(adopted, [A]);
    assert.equal(frontier.hosts.get(A), host);
  });

  test('cuts what is too deep, out of scope, a trap, over a budget, and counts it', () => {
    const { admission, stats } = frontierRig({ maxDepth: 2, maxPagesPerHost: 3, maxPagesPerPattern: 2 });
    assert.equal(admission.offer(`http://${A}/deep`, A, 3), 'known');
    assert.equal(stats.cut.depth, 1);
    assert.equal(admission.wantsHost('c.example'), false, 'not a seed host: callers do not offer its URLs');
    assert.equal(admission.offer(`http://${A}/r/r/r/`, A, 1), 'known');
    assert.equal(stats.cut.repeatedSegment, 1);
    assert.equal(admission.offer(`http://${A}/cal/1`, A, 1), 'queued');
    assert.equal(admission.offer(`http://${A}/cal/2`, A, 1), 'queued');
    assert.equal(admission.offer(`http://${A}/cal/3`, A, 1), 'known', 'over --max-pages-per-pattern');
    assert.equal(stats.cut.patternBudget, 1);
    assert.equal(admission.offer(`http://${A}/other`, A, 1), 'queued');
    assert.equal(admission.offer(`http://${A}/more`, A, 1), 'known', 'over --max-pages-per-host');
    assert.equal(stats.cut.hostBudget, 1);
  });

  test('a URL robots.txt disallows is queued ahead of the rest (it is only recorded, not fetched)', () => {
    const { admission, ready } = frontierRig();
    admission.offer(`http://${A}/1`, A, 1);
    const host = ready(A);
    host.robotsKnown({ isAllowed: (u) => !u.includes('/private'), crawlDelaySeconds: undefined, source: 'none' });
    admission.offer(`http://${A}/2`, A, 1);
    admission.offer(`http://${A}/private/x`, A, 2);
    admission.offer(`http://${A}/0`, A, 0);
    const order: string[] = [];
    for (let it = host.shift(); it !== undefined; it = host.shift()) order.push(new URL(it.url).pathname);
    // (The rig's runner may have started the others already; what is queued comes in this order.)
    assert.deepEqual(order.slice(0, 2), ['/private/x', '/0'], 'ahead of a shallower URL queued after it');
  });

  test("a full frontier answers 'full' (the URL stays on disk) and counts it", () => {
    const { admission, frontier, stats } = frontierRig({ frontierCap: 2 });
    admission.offer(`http://${A}/1`, A, 1);
    admission.offer(`http://${A}/2`, A, 1);
    assert.equal(admission.offer(`http://${A}/3`, A, 1), 'full');
    assert.equal(stats.cut.frontierFull, 1);
    assert.equal(frontier.queued, 2);
  });

  test('a --hook filter that says no keeps the URL out; one that throws keeps it in (reported)', () => {
    const { admission, failures } = frontierRig(
      {},
      {
        scope: 'any',
        filter: (url) => {
          if (url.endsWith('/bug')) throw new Error('bug');
          return !url.endsWith('/no');
        },
      },
    );
    assert.equal(admission.offer(`http://${A}/no`, A, 0), 'known');
    assert.equal(admission.offer(`http://${A}/yes`, A, 0), 'queued');
    assert.equal(admission.offer(`http://${A}/bug`, A, 0), 'queued');
    assert.equal(failures.length, 1);
  });

  test('nothing is taken for a host being let go or left alone', () => {
    const { admission, frontier } = frontierRig();
    admission.offer(`http://${A}/1`, A, 0);
    const host = frontier.hosts.get(A)!;
    host.giveUp();
    assert.equal(admission.offer(`http://${A}/2`, A, 0), 'known');
    assert.equal(host.letGo(), true);
    assert.equal(admission.offer(`http://${A}/3`, A, 0), 'known');
  });

  test('a host left alone sets aside the links it is offered, once each, unqueued: they go with the host if it moves', () => {
    const { admission, frontier } = frontierRig();
    admission.offer(`http://${A}/1`, A, 0);
    const host = frontier.hosts.get(A)!;
    const pending = frontier.dropHost(host);
    host.giveUp();
    assert.deepEqual(
      pending.map((i) => i.url),
      [`http://${A}/1`],
    );
    assert.equal(admission.offer(`http://${A}/2`, A, 1), 'known', 'nothing to fetch here');
    assert.equal(admission.offer(`http://${A}/2`, A, 1), 'known');
    assert.equal(admission.offer(`http://${A}/3`, A, 2), 'known');
    assert.equal(frontier.queued, 0, 'the node may end: it fetches none of them');
    // The host moves to a live node: its queue is sent on, with what was set aside.
    const moved = frontier.dropHost(host);
    assert.deepEqual(
      moved.map((i) => `${i.url} @${i.depth}`),
      [`http://${A}/2 @1`, `http://${A}/3 @2`],
    );
    assert.equal(frontier.dropHost(host).length, 0);
    assert.equal(host.isClaimed(urlKey(`http://${A}/2`)), false, 'claims given back with them');
  });
});

describe('Admission.offerRanked: the one way in, with the --hook priority', () => {
  test('the hook ranks each URL offered; a URL known already is not given to it', async () => {
    const asked: string[] = [];
    const priority = async (url: string): Promise<number> => {
      asked.push(url);
      return url.endsWith('/first') ? 10 : 0;
    };
    const { admission, frontier, ready, runner } = frontierRig({}, { priority });
    assert.equal(await admission.offerRanked(`http://${A}/later`, A, 1), 'queued');
    assert.equal(await admission.offerRanked(`http://${A}/first`, A, 1), 'queued');
    assert.equal(await admission.offerRanked(`http://${A}/first`, A, 1), 'known');
    assert.deepEqual(asked, [`http://${A}/later`, `http://${A}/first`]);
    assert.equal(frontier.queued, 2);
    runner.room = 1;
    ready(A);
    assert.deepEqual(runner.started, [`http://${A}/first`], 'the higher priority first');
  });

  test('without a priority hook it answers at once (offer)', () => {
    const { admission } = frontierRig();
    assert.equal(admission.offerRanked(`http://${A}/x`, A, 1), 'queued');
  });
});

describe('Admission.admitRedirect: the next hop of a redirect', () => {
  const hop = (path: string, depth = 1) => {
    const url = `http://${A}${path}`;
    return { url, key: urlKey(url), hostDir: A, depth };
  };

  test('the same rules as links: filter, traps, budgets, robots.txt; an admitted hop is claimed', () => {
    const { admission, frontier, ready, stats } = frontierRig({ maxPagesPerPattern: 1 }, { filter: (url) => !url.endsWith('/filtered') });
    admission.offer(`http://${A}/start`, A, 0);
    const host = ready(A);
    assert.equal(admission.admitRedirect(host, hop('/filtered')), false, 'the --hook filter');
    assert.equal(admission.admitRedirect(host, hop('/x/x/x/')), false, 'a trap');
    assert.equal(stats.cut.repeatedSegment, 1);
    assert.equal(admission.admitRedirect(host, hop('/deep', 99)), false, 'too deep');
    const target = hop('/t/1');
    assert.equal(admission.admitRedirect(host, target), true);
    assert.equal(host.isClaimed(target.key), true);
    assert.equal(admission.admitRedirect(host, target), false, 'claimed already');
    assert.equal(admission.admitRedirect(host, hop('/t/2')), false, 'same shape as /t/1: over --max-pages-per-pattern');
    assert.equal(stats.cut.patternBudget, 1);
    assert.equal(frontier.queued, 0, 'a hop is fetched at once, never queued');
  });

  test('robots.txt disallows a hop', () => {
    const { admission, frontier, ready } = frontierRig();
    admission.offer(`http://${A}/start`, A, 0);
    const host = ready(A);
    host.robotsKnown({ isAllowed: (u) => !u.includes('/private'), crawlDelaySeconds: undefined, source: 'none' });
    assert.equal(admission.admitRedirect(host, hop('/private/x')), false);
    assert.equal(admission.admitRedirect(host, hop('/public')), true);
    assert.equal(frontier.hosts.size, 1);
  });
});
