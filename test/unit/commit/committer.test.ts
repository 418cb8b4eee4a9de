import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Commit, Target } from '../../../src/fetch/page-outcome.js';
import { FetchFailure } from '../../../src/errors.js';
import type { FetchedResponse } from '../../../src/fetch/fetcher.js';
import type { HostState } from '../../../src/frontier/host-state.js';
import type { Hooks } from '../../../src/hooks/hooks.js';
import { urlKey } from '../../../src/url/key.js';
import { normalizeUrl } from '../../../src/url/normalize.js';
import { committerRig } from '../../support/committer-rig.js';
import { frontierRig } from '../../support/frontier-rig.js';

let root: string;
let n = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mountcrawl-committer-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

function target(url: string, depth = 0): Target {
  const r = normalizeUrl(url);
  if (!r.ok) throw new Error(url);
  return { url: r.url, key: urlKey(r.url), hostDir: r.hostDir, depth };
}

function response(url: string, status = 200): FetchedResponse {
  return {
    url,
    status,
    headers: {},
    mediaType: 'text/html',
    contentType: 'text/html',
    body: Buffer.from('<p>hi</p>'),
    truncated: false,
    durationMs: 1,
  };
}

async function rig(hooks?: Hooks) {
  const r = frontierRig({ retryBaseMs: 1_000, retryMaxMs: 60_000, maxAttempts: 3 });
  const { store, committer } = await committerRig(r, join(root, `d${n++}`), hooks);
  return { ...r, store, committer };
}

/** A host of the rig, taken into the frontier with `url` queued and then started (as the runner does). */
function started(r: Awaited<ReturnType<typeof rig>>, url: string): { host: HostState; t: Target } {
  const t = target(url);
  r.admission.offer(t.url, t.hostDir, 0);
  const host = r.ready(t.hostDir);
  return { host, t };
}

describe('Committer', () => {
  test('a page: its links record is written, it is done, its links of owned hosts are queued', async () => {
    const r = await rig();
    const { host, t } = started(r, 'http://a.example/');
    const page: Commit = {
      type: 'page',
      target: t,
      response: response(t.url),
      finalUrl: t.url,
      redirects: [],
      body: Buffer.from('<p>hi</p>'),
      links: ['http://a.example/next', 'http://elsewhere.example/x'],
    };
    await r.committer.commit(host, { commits: [page], tooLong: 2, requests: 1, claimed: [] });
    assert.equal(host.isDone(t.key), true);
    assert.equal(host.isClaimed(t.key), false);
    assert.equal(await r.store.hasLinks(t.hostDir, t.key), true);
    assert.equal(r.stats.pages, 1);
    assert.equal(r.stats.cut.tooLong, 2);
    assert.equal(host.isClaimed(target('http://a.example/next').key), true, 'a link of an owned host is queued');
    assert.equal(r.frontier.hosts.has('elsewhere.example'), false, 'a link of a host out of scope is only on disk');
  });

  test("a page whose links did not all fit in the frontier: its host's directory is listed by the next reseed, even one of settled directories only", async () => {
    const r = frontierRig({ frontierCap: 1, perHost: 1 });
    const far = Date.now() + 60_000; // every listing settles
    const { committer, reseeder } = await committerRig(r, join(root, `d${n++}`), undefined, () => ({ mtimeMs: far }));
    const { host, t } = started({ ...r, committer } as never, 'http://a.example/');
    const sink = {
      wantsHost: (h: string) => h === 'a.example',
      prepareHosts: async () => undefined,
      addSeed: () => undefined,
      offers: [] as string[],
      offer(url: string) {
        this.offers.push(url);
        return 'queued' as const;
      },
    };
    await committer.commit(host, {
      commits: [{ type: 'page', target: t, response: response(t.url), finalUrl: t.url, redirects: [], body: null, links: [] }],
      tooLong: 0,
      requests: 1,
      claimed: [],
    });
    await reseeder.reseed(sink, false, 'own'); // a.example listed and settled
    const second = target('http://a.example/2');
    host.claim(second.key);
    const page: Commit = {
      type: 'page',
      target: second,
      response: response(second.url),
      finalUrl: second.url,
      redirects: [],
      body: null,
      links: ['http://a.example/next', 'http://a.example/other'],
    };
    await committer.commit(host, { commits: [page], tooLong: 0, requests: 1, claimed: [] });
    assert.equal(r.frontier.queued, 1, 'one link fit');
    sink.offers.length = 0;
    const stats = await reseeder.reseed(sink, false, 'own-unsettled');
    assert.equal(stats.recordsRead, 1, 'the record of the page is read again');
    assert.deepEqual(sink.offers.sort(), ['http://a.example/next', 'http://a.example/other']);
  });

  test('a transient failure: errs record, a retry at the back-off, the URL stays claimed; the last attempt is final', async () => {
    const r = await rig();
    const { host, t } = started(r, 'http://a.example/flaky');
    const fail: Commit = { type: 'error', target: t, failure: new FetchFailure('HTTP_503', 'transient', 'HTTP 503', { status: 503 }) };
    await r.committer.commit(host, { commits: [fail], tooLong: 0, requests: 1, claimed: [] });
    assert.equal(host.errsOf(t.key)?.attempts, 1);
    assert.equal(host.nextRetryAt(), r.clock.monotonic() + 1_000, 'base back-off after the first failure');
    assert.equal(host.isClaimed(t.key), true);
    await r.committer.commit(host, { commits: [fail], tooLong: 0, requests: 1, claimed: [] });
    await r.committer.commit(host, { commits: [fail], tooLong: 0, requests: 1, claimed: [] });
    assert.equal(host.isDone(t.key), true, '--max-attempts 3 reached: final');
    assert.equal(host.errsOf(t.key), undefined);
  });

  // docs/protocol.md, errs records: `referrer`, the page a URL was first found on.
  test('a link queued from a page carries the page as its referrer into the errs record; a retry keeps it', async () => {
    const r = await rig();
    const { host, t } = started(r, 'http://a.example/');
    r.runner.room = 0; // nothing more starts: the queue is read here
    const page: Commit = {
      type: 'page',
      target: t,
      response: response(t.url),
      finalUrl: t.url,
      redirects: [],
      body: Buffer.from('<p>hi</p>'),
      links: ['http://a.example/broken'],
    };
    await r.committer.commit(host, { commits: [page], tooLong: 0, requests: 1, claimed: [] });
    const [item, ...rest] = r.frontier.dropHost(host);
    assert.equal(rest.length, 0);
    assert.deepEqual(item!.referrer, { url: t.url, depth: 0 });
    const broken: Target = { ...item!, hostDir: t.hostDir };
    const fail: Commit = { type: 'error', target: broken, failure: new FetchFailure('HTTP_503', 'transient', 'HTTP 503', { status: 503 }) };
    await r.committer.commit(host, { commits: [fail], tooLong: 0, requests: 1, claimed: [] });
    assert.deepEqual(host.errsOf(broken.key)?.referrer, { url: t.url, depth: 0 });
    const [retry] = r.frontier.dropHost(host);
    assert.deepEqual(retry?.referrer, { url: t.url, depth: 0 }, 'the retry keeps it');
    // A seed has none.
    const seed = target('http://a.example/seed');
    await r.committer.commit(host, { commits: [{ ...fail, target: seed }], tooLong: 0, requests: 1, claimed: [] });
    assert.equal(host.errsOf(seed.key)?.referrer, undefined);
  });

  test('Retry-After pauses the whole host', async () => {
    const r = await rig();
    const { host, t } = started(r, 'http://a.example/busy');
    const fail: Commit = {
      type: 'error',
      target: t,
      failure: new FetchFailure('HTTP_429', 'transient', 'HTTP 429', { status: 429, retryAfterMs: 30_000 }),
    };
    await r.committer.commit(host, { commits: [fail], tooLong: 0, requests: 1, claimed: [] });
    assert.equal(host.politeness.nextStartAt(r.clock.monotonic()), r.clock.monotonic() + 30_000);
  });

  test('redirect targets claimed by the chain are released unless committed', async () => {
    const r = await rig();
    const { host, t } = started(r, 'http://a.example/old');
    const hop = target('http://a.example/new');
    host.claim(hop.key);
    const lost = target('http://a.example/lost');
    host.claim(lost.key);
    const page: Commit = {
      type: 'page',
      target: hop,
      response: response(hop.url),
      finalUrl: hop.url,
      redirects: [],
      body: null,
      links: [],
    };
    const from: Commit = {
      type: 'page',
      target: t,
      response: response(t.url, 301),
      finalUrl: hop.url,
      redirects: [],
      body: null,
      links: [hop.url],
    };
    await r.committer.commit(host, { commits: [page, from], tooLong: 0, requests: 2, claimed: [hop, lost] });
    assert.equal(host.isDone(hop.key), true);
    assert.equal(host.isDone(t.key), true);
    assert.equal(host.isClaimed(lost.key), false);
  });

  test('a --hook onPage that throws changes nothing and is counted', async () => {
    const r = await rig([
      {
        file: 'bug.mjs',
        onPage: () => {
          throw new Error('bug');
        },
      },
    ]);
    const { host, t } = started(r, 'http://a.example/');
    const page: Commit = {
      type: 'page',
      target: t,
      response: response(t.url),
      finalUrl: t.url,
      redirects: [],
      body: Buffer.from('<p>hi</p>'),
      links: [],
    };
    await r.committer.commit(host, { commits: [page], tooLong: 0, requests: 1, claimed: [] });
    assert.equal(host.isDone(t.key), true);
    assert.equal(r.stats.hookErrors, 1);
  });
});
