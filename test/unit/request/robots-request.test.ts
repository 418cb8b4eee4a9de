import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { FetchedResponse, Fetcher } from '../../../src/fetch/fetcher.js';
import { RobotsCache, RobotsUnavailable } from '../../../src/fetch/robots.js';
import { fetchMiddleware } from '../../../src/hooks/builtin-steps.js';
import type { HookCallEnv } from '../../../src/hooks/hook-call.js';
import type { HookModule } from '../../../src/hooks/hooks.js';
import { silentLogger } from '../../../src/progress/logger.js';
import { CrawlStats } from '../../../src/progress/stats.js';
import { robotsRules } from '../../../src/request/robots-request.js';
import { Layout } from '../../../src/store/layout.js';
import { FakeClock } from '../../support/fake-clock.js';
import { freshPaths } from '../../support/temp-paths.js';

const freshPath = freshPaths('mountcrawl-robots-request-');

/** A fetcher answering robots.txt with `status` and `body`, counting requests. */
function site(status: number, body: string, headers: Record<string, string> = {}): { fetcher: Fetcher; asked: string[] } {
  const asked: string[] = [];
  const fetcher = {
    async fetch(url: string): Promise<FetchedResponse> {
      asked.push(url);
      return {
        url,
        status,
        headers,
        mediaType: 'text/plain',
        contentType: 'text/plain',
        body: Buffer.from(body),
        truncated: false,
        durationMs: 1,
      };
    },
  } as unknown as Fetcher;
  return { fetcher, asked };
}

describe('robots.txt through the request pipeline: what the hooks answer means (docs/hooks.md)', () => {
  const clock = new FakeClock({ wall: Date.parse('2026-01-01T00:00:00Z') });
  const stats = new CrawlStats(() => clock.monotonic());
  const env: HookCallEnv = { clock, stats, log: silentLogger, timeoutMs: 1_000 };
  const rig = (hooks: HookModule[], answer: { fetcher: Fetcher }, dir: string, sent?: (status: number | undefined) => void) => {
    const layout = new Layout(join(freshPath(), dir));
    const cache = new RobotsCache(layout, { userAgent: 'mountcrawl', maxAgeMs: 60_000, nodeId: 'n', fsync: false }, clock);
    const middleware = fetchMiddleware(
      'mountcrawl',
      () => false,
      () => clock.now(),
      { hooks, env },
    );
    return {
      layout,
      rules: () => robotsRules(cache, 'a.example', 'http://a.example', { fetcher: answer.fetcher, middleware, ...(sent ? { sent } : {}) }),
    };
  };

  test('an answer of beforeFetch is the robots.txt, kept like a fetched one', async () => {
    const answer = site(500, '');
    const r = rig(
      [
        {
          file: 'h',
          beforeFetch: (req) => (req.kind === 'robots' ? { action: 'respond', body: 'User-agent: *\nDisallow: /x\n' } : undefined),
        },
      ],
      answer,
      'respond',
    );
    const rules = await r.rules();
    assert.equal(rules.isAllowed('http://a.example/x'), false);
    assert.equal(rules.isAllowed('http://a.example/y'), true);
    assert.equal(answer.asked.length, 0);
    assert.equal((await r.rules()).isAllowed('http://a.example/x'), false, 'from the mount');
  });

  test('a skip of beforeFetch is not honoured for robots.txt: it is fetched and obeyed anyway', async () => {
    const answer = site(200, 'User-agent: *\nDisallow: /\n');
    const r = rig([{ file: 'h', beforeFetch: () => ({ action: 'skip' }) }], answer, 'skip');
    const rules = await r.rules();
    assert.equal(rules.isAllowed('http://a.example/x'), false);
    assert.equal(answer.asked.length, 1);
    await access(r.layout.robots('a.example'));
  });

  test('afterFetch retry: robots.txt is unavailable for now (the host waits); afterFetch error: everything allowed', async () => {
    const retry = rig(
      [{ file: 'h', afterFetch: () => ({ action: 'retry', delayMs: 5_000 }) }],
      site(200, 'User-agent: *\nDisallow: /\n'),
      'retry',
    );
    await assert.rejects(retry.rules(), (err) => {
      assert.ok(err instanceof RobotsUnavailable);
      assert.equal(err.code, 'HOOK_RETRY');
      assert.equal(err.kind, 'transient');
      assert.equal(err.retryAfterMs, 5_000);
      return true;
    });
    const error = rig(
      [{ file: 'h', afterFetch: () => ({ action: 'error', reason: 'block page' }) }],
      site(200, 'User-agent: *\nDisallow: /\n'),
      'error',
    );
    assert.equal((await error.rules()).isAllowed('http://a.example/x'), true);
  });

  test('the shared status verdict: a 503 with Retry-After waits, a 404 allows everything', async () => {
    await assert.rejects(
      rig([], site(503, '', { 'retry-after': '7' }), 's503').rules(),
      (err) => err instanceof RobotsUnavailable && err.code === 'HTTP_503' && err.retryAfterMs === 7_000,
    );
    const rules = await rig([], site(404, 'User-agent: *\nDisallow: /\n'), 's404').rules();
    assert.equal(rules.source, 'none');
    assert.equal(rules.isAllowed('http://a.example/x'), true);
  });

  // The end summary and the metrics count requests a site saw (src/request/pipeline.ts): robots.txt
  // read from the mount is none, each redirect hop is one, a 503 that makes the host wait is one.
  test('the pipeline tells of each request sent, with its status: none from the mount or a hook, one per hop, one for a 503', async () => {
    const layout = new Layout(join(freshPath(), 'sent'));
    const cache = new RobotsCache(layout, { userAgent: 'mountcrawl', maxAgeMs: 60_000, nodeId: 'n', fsync: false }, clock);
    const asked: string[] = [];
    const fetcher = {
      async fetch(url: string): Promise<FetchedResponse> {
        asked.push(url);
        const moved = url.endsWith('/robots.txt') && !url.includes('/b/');
        return {
          url,
          status: moved ? 301 : 200,
          headers: moved ? { location: 'http://a.example/b/robots.txt' } : {},
          mediaType: 'text/plain',
          contentType: 'text/plain',
          body: Buffer.from(moved ? '' : 'User-agent: *\nDisallow: /x\n'),
          truncated: false,
          durationMs: 1,
        };
      },
    } as unknown as Fetcher;
    const counts: (number | undefined)[] = [];
    const rules = () => robotsRules(cache, 'a.example', 'http://a.example', { fetcher, sent: (s) => counts.push(s) });
    assert.equal((await rules()).isAllowed('http://a.example/x'), false);
    assert.deepEqual(counts, [301, 200], 'the request and its redirect');
    assert.equal((await rules()).isAllowed('http://a.example/x'), false);
    assert.deepEqual(counts, [301, 200], 'read from the mount: nothing sent, nothing counted');
    assert.equal(asked.length, 2);
    const answered: (number | undefined)[] = [];
    await rig([{ file: 'h', beforeFetch: () => ({ action: 'respond', body: '' }) }], site(500, ''), 'sent-hook', (n) =>
      answered.push(n),
    ).rules();
    assert.deepEqual(answered, [], 'a --hook answered: nothing sent');
    const failed: (number | undefined)[] = [];
    await assert.rejects(rig([], site(503, ''), 'sent-503', (n) => failed.push(n)).rules(), RobotsUnavailable);
    assert.deepEqual(failed, [503], 'a 503 was sent and counted before the host waits');
  });
});
