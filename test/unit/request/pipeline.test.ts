import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FetchedResponse, Fetcher } from '../../../src/fetch/fetcher.js';
import { fetchMiddleware } from '../../../src/hooks/builtin-steps.js';
import type { HookRequest } from '../../../src/hooks/hooks.js';
import { MAX_ROBOTS_REDIRECTS, redirectPolicy, sendRequest, type RequestSpec } from '../../../src/request/pipeline.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

/** A site where /r/N redirects to /r/N+1 (or to `next(url)`), and every other URL is a 200 page. */
function redirectingFetcher(next: (n: number, url: string) => string = (n, url) => `${new URL(url).origin}/r/${n + 1}`): {
  fetcher: Fetcher;
  asked: string[];
} {
  const asked: string[] = [];
  const fetcher = {
    async fetch(url: string): Promise<FetchedResponse> {
      asked.push(url);
      const m = /\/r\/(\d+)$/.exec(url);
      const base = { url, mediaType: 'text/html', contentType: 'text/html', truncated: false, durationMs: 1 };
      if (m === null) return { ...base, status: 200, headers: {}, body: Buffer.from('<p>end</p>') };
      return { ...base, status: 301, headers: { location: next(Number(m[1]), url) }, body: null };
    },
  } as unknown as Fetcher;
  return { fetcher, asked };
}

const middleware = fetchMiddleware(
  'mountcrawl',
  () => true,
  () => NOW,
);

function spec(kind: RequestSpec['kind'], maxRedirects: number, url = 'http://a.example/r/0'): RequestSpec {
  return { kind, url, host: 'a.example', depth: 0, redirects: redirectPolicy(kind, { hostDir: 'a.example', maxRedirects }) };
}

describe('the request pipeline: one hop loop, a redirect policy per kind', () => {
  test('a page follows --max-redirects redirects; one more is too many', async () => {
    for (const max of [0, 1, 3]) {
      const { fetcher, asked } = redirectingFetcher();
      const r = await sendRequest(spec('page', max), { fetcher, middleware });
      assert.equal(r.end.type, 'too-many-redirects', `--max-redirects ${max}`);
      assert.equal(r.hops.length, max);
      assert.equal(r.requests, max + 1);
      assert.equal(asked.length, max + 1);
    }
  });

  test('each request is told as it goes out, before the fetcher has it, and after the wait for its turn', async () => {
    const { fetcher, asked } = redirectingFetcher();
    const events: string[] = [];
    const logged: Fetcher = { fetch: (url: string) => (events.push(`fetch ${url}`), fetcher.fetch(url)) } as unknown as Fetcher;
    const pace = async (): Promise<boolean> => (events.push('pace'), true);
    const r = await sendRequest(spec('page', 2), { fetcher: logged, middleware, pace, sending: () => events.push('sending') });
    assert.equal(r.requests, 3);
    assert.equal(asked.length, 3);
    assert.deepEqual(events, [
      'sending',
      'fetch http://a.example/r/0',
      'pace',
      'sending',
      'fetch http://a.example/r/1',
      'pace',
      'sending',
      'fetch http://a.example/r/2',
    ]);
    // A hop its turn refuses is not sent, and not told.
    events.length = 0;
    const refused = await sendRequest(spec('page', 2), {
      fetcher: logged,
      middleware,
      pace: async () => false,
      sending: () => events.push('sending'),
    });
    assert.equal(refused.requests, 1);
    assert.deepEqual(events, ['sending', 'fetch http://a.example/r/0']);
  });

  test('a sitemap follows --max-redirects too, and only within its host', async () => {
    const { fetcher } = redirectingFetcher();
    const r = await sendRequest(spec('sitemap', 2), { fetcher, middleware });
    assert.equal(r.end.type, 'too-many-redirects');
    assert.equal(r.hops.length, 2);
    const away = redirectingFetcher(() => 'http://b.example/elsewhere');
    const r2 = await sendRequest(spec('sitemap', 2), { fetcher: away.fetcher, middleware });
    assert.equal(r2.end.type, 'not-followed');
    assert.equal(away.asked.length, 1);
  });

  test('robots.txt follows five redirects whatever --max-redirects says (RFC 9309), on any host', async () => {
    assert.equal(MAX_ROBOTS_REDIRECTS, 5);
    for (const max of [0, 20]) {
      const { fetcher, asked } = redirectingFetcher();
      const r = await sendRequest(spec('robots', max), { fetcher, middleware });
      assert.equal(r.end.type, 'too-many-redirects');
      assert.equal(r.hops.length, 5);
      assert.equal(asked.length, 6);
    }
    const { fetcher, asked } = redirectingFetcher((n) => (n < 2 ? `http://b${n}.example/r/${n + 1}` : 'http://c.example/robots.txt'));
    const r = await sendRequest(spec('robots', 0, 'http://a.example/r/0'), { fetcher, middleware });
    assert.equal(r.end.type, 'response');
    assert.deepEqual(asked, ['http://a.example/r/0', 'http://b0.example/r/1', 'http://b1.example/r/2', 'http://c.example/robots.txt']);
  });

  test('a page follows only what its claim takes; a loop ends the chain', async () => {
    const { fetcher } = redirectingFetcher();
    const claimed: string[] = [];
    const claim = (next: { url: string }): boolean => {
      claimed.push(next.url);
      return claimed.length < 2;
    };
    const r = await sendRequest(
      {
        kind: 'page',
        url: 'http://a.example/r/0',
        host: 'a.example',
        depth: 0,
        redirects: redirectPolicy('page', { hostDir: 'a.example', maxRedirects: 10, claim }),
      },
      { fetcher, middleware },
    );
    assert.equal(r.end.type, 'not-followed');
    assert.deepEqual(claimed, ['http://a.example/r/1', 'http://a.example/r/2']);
    const loop = redirectingFetcher((n, url) => (n === 2 ? 'http://a.example/r/0' : `${new URL(url).origin}/r/${n + 1}`));
    const r2 = await sendRequest(spec('page', 10), { fetcher: loop.fetcher, middleware });
    assert.equal(r2.end.type, 'redirect-loop');
    assert.equal(r2.hops.length, 2);
  });

  test('every hop goes through the middleware with its kind; the robots.txt gate never blocks robots.txt', async () => {
    const { fetcher } = redirectingFetcher();
    const seen: HookRequest[] = [];
    const gate = fetchMiddleware(
      'mountcrawl',
      () => false,
      () => NOW,
    );
    const r = await sendRequest(spec('robots', 0, 'http://a.example/robots.txt'), { fetcher, middleware: gate });
    assert.equal(r.end.type, 'response');
    const page = await sendRequest(spec('page', 0, 'http://a.example/x'), { fetcher, middleware: gate });
    assert.equal(page.end.type, 'failure');
    assert.equal(page.end.type === 'failure' ? page.end.failure.code : '', 'ROBOTS_DISALLOWED');
    assert.equal(page.requests, 0);
    const recording = {
      before: async (req: HookRequest) => (seen.push({ ...req }), { kind: 'fetch' as const, headers: req.headers }),
      after: async () => ({ action: 'accept' as const }),
    };
    await sendRequest(spec('sitemap', 5), { fetcher, middleware: recording as unknown as typeof middleware });
    assert.deepEqual(
      seen.map((s) => [s.kind, s.url]),
      [0, 1, 2, 3, 4, 5].map((n) => ['sitemap', `http://a.example/r/${n}`]),
    );
  });
});
