import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FetchedResponse } from '../../../src/fetch/fetcher.js';
import { fetchMiddleware } from '../../../src/hooks/builtin-steps.js';
import type { HookCallEnv } from '../../../src/hooks/hook-call.js';
import type { HookModule, HookRequest } from '../../../src/hooks/hooks.js';
import { urlPriority } from '../../../src/hooks/url-priority.js';
import { silentLogger } from '../../../src/progress/logger.js';
import { CrawlStats } from '../../../src/progress/stats.js';
import { FakeClock } from '../../support/fake-clock.js';

const request = (url: string, kind: HookRequest['kind'] = 'page'): HookRequest => ({ url, depth: 1, host: 'a.example', kind, headers: {} });
const response = (status: number, headers: Record<string, string> = {}): FetchedResponse => ({
  url: 'http://a.example/x',
  status,
  headers,
  mediaType: 'text/html',
  contentType: 'text/html',
  body: status === 200 ? Buffer.from('<p>Access denied</p>') : null,
  truncated: false,
  durationMs: 1,
});

function rig(hooks: HookModule[], robotsAllowed = (_h: string, _u: string) => true) {
  const clock = new FakeClock();
  const stats = new CrawlStats(() => clock.monotonic());
  const env: HookCallEnv = { clock, stats, log: silentLogger, timeoutMs: 1_000 };
  return { clock, stats, env, chain: fetchMiddleware('ua/1', robotsAllowed, () => clock.now(), { hooks, env }) };
}

/** Lets pending promise callbacks run (the fake clock fires timers only when advanced). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('MiddlewareChain', () => {
  test('built-in steps first: a user step sees the default headers; modules run in order', async () => {
    const seen: string[] = [];
    const { chain } = rig([
      { file: 'a', beforeFetch: (r) => void (r.headers['x-a'] = `${r.headers['user-agent']}+a`) },
      { file: 'b', beforeFetch: async (r) => void seen.push(r.headers['x-a']!) },
    ]);
    const out = await chain.before(request('http://a.example/'));
    assert.equal(out.kind, 'fetch');
    assert.deepEqual(seen, ['ua/1+a']);
    assert.equal(out.kind === 'fetch' && out.headers['accept-encoding'], 'gzip, deflate, br');
  });

  test('the robots gate skips before any user step; a user skip and answer', async () => {
    let called = 0;
    const { chain } = rig(
      [
        {
          file: 'u',
          beforeFetch: (r) => {
            called++;
            if (r.url.endsWith('/skip')) return { action: 'skip', reason: 'no' };
            if (r.url.endsWith('/answer')) return { action: 'respond', body: '<a href="/x">x</a>' };
            return undefined;
          },
        },
      ],
      (_h, url) => !url.includes('/robots-no'),
    );
    const robots = await chain.before(request('http://a.example/robots-no'));
    assert.equal(robots.kind === 'skip' && robots.failure.code, 'ROBOTS_DISALLOWED');
    assert.equal(called, 0);
    const skip = await chain.before(request('http://a.example/skip'));
    assert.equal(skip.kind === 'skip' && skip.failure.code, 'HOOK_SKIPPED');
    const answer = await chain.before(request('http://a.example/answer'));
    assert.equal(answer.kind === 'respond' && answer.response.body!.toString(), '<a href="/x">x</a>');
    assert.equal(answer.kind === 'respond' && answer.response.mediaType, 'text/html');
  });

  test('a beforeFetch that returns the request (or one like it) sends it with its headers, counted as no error', async () => {
    const { chain, stats } = rig([
      {
        file: 'u',
        beforeFetch: (r) => {
          r.headers['x-returned'] = 'yes';
          if (r.url.endsWith('/like')) return { url: r.url, headers: { ...r.headers, 'X-Like': 'also' } } as unknown as HookRequest;
          return r;
        },
      },
    ]);
    const same = await chain.before(request('http://a.example/same'));
    assert.equal(same.kind, 'fetch');
    assert.equal(same.kind === 'fetch' && same.headers['x-returned'], 'yes');
    assert.equal(same.kind === 'fetch' && same.headers['user-agent'], 'ua/1');
    const like = await chain.before(request('http://a.example/like'));
    assert.equal(like.kind === 'fetch' && like.headers['x-like'], 'also');
    assert.equal(stats.hookErrors, 0);
  });

  test('the robots gate never blocks robots.txt itself; every kind sees the same steps', async () => {
    const kinds: string[] = [];
    const { chain } = rig([{ file: 'u', beforeFetch: (r) => void kinds.push(r.kind) }], () => false);
    const robots = await chain.before(request('http://a.example/robots.txt', 'robots'));
    assert.equal(robots.kind, 'fetch');
    const page = await chain.before(request('http://a.example/x', 'page'));
    assert.equal(page.kind === 'skip' && page.failure.code, 'ROBOTS_DISALLOWED');
    assert.deepEqual(kinds, ['robots']);
  });

  test('after: the built-in verdict is seen and may be replaced', async () => {
    const verdicts: string[] = [];
    const { chain } = rig([
      {
        file: 'u',
        afterFetch: (_r, res) => {
          verdicts.push(res.verdict.action);
          if (res.text?.includes('Access denied')) return { action: 'error', reason: 'block page' };
          return res.verdict;
        },
      },
    ]);
    const blocked = await chain.after(request('http://a.example/x'), response(200), false);
    assert.equal(blocked.failure?.code, 'HOOK_ERROR');
    assert.equal(blocked.failure?.kind, 'final');
    const busy = await chain.after(request('http://a.example/x'), response(503, { 'retry-after': '7' }), false);
    assert.equal(busy.failure?.code, 'HTTP_503');
    assert.equal(busy.failure?.retryAfterMs, 7_000);
    assert.deepEqual(verdicts, ['accept', 'retry']);
  });

  test('a step that throws or hangs changes nothing and is counted', async () => {
    const { chain, clock, stats } = rig([
      {
        file: 'bad',
        beforeFetch: (r) => {
          r.headers['user-agent'] = 'changed before throwing';
          throw new Error('bug');
        },
        afterFetch: () => new Promise(() => undefined),
      },
    ]);
    const out = await chain.before(request('http://a.example/'));
    assert.equal(out.kind === 'fetch' && out.headers['user-agent'], 'ua/1');
    const pending = chain.after(request('http://a.example/'), response(404), false);
    await settle();
    clock.advance(1_000);
    const verdict = await pending;
    assert.equal(verdict.failure?.code, 'HTTP_404');
    assert.equal(stats.hookErrors, 1);
    assert.equal(stats.hookTimeouts, 1);
  });
});

describe('urlPriority', () => {
  test('the default is minus the depth; modules in turn; a failing one keeps the priority so far', async () => {
    const clock = new FakeClock();
    const stats = new CrawlStats(() => clock.monotonic());
    const env: HookCallEnv = { clock, stats, log: silentLogger, timeoutMs: 1_000 };
    assert.equal(urlPriority([{ file: 'x', onPage: () => undefined }], env), undefined);
    const rank = urlPriority(
      [
        { file: 'a', priority: (url, c) => (url.includes('/top/') ? 10 : c.priority) },
        { file: 'b', priority: (url, c) => (url.includes('/bug') ? Promise.reject(new Error('bug')) : c.priority + 1) },
      ],
      env,
    )!;
    assert.equal(await rank('http://a.example/x', { depth: 3, host: 'a.example' }), -2);
    assert.equal(await rank('http://a.example/top/x', { depth: 3, host: 'a.example' }), 11);
    assert.equal(await rank('http://a.example/top/bug', { depth: 3, host: 'a.example' }), 10);
    assert.equal(stats.hookErrors, 1);
  });
});
