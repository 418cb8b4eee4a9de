import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FetchFailure } from '../../../src/errors.js';
import type { FetchedResponse, Fetcher } from '../../../src/fetch/fetcher.js';
import { RobotsCache, RobotsUnavailable, parseRobots } from '../../../src/fetch/robots.js';
import { fetchMiddleware } from '../../../src/hooks/builtin-steps.js';
import type { PipelineContext } from '../../../src/request/pipeline.js';
import { robotsRules } from '../../../src/request/robots-request.js';
import { Layout } from '../../../src/store/layout.js';
import { systemClock } from '../../../src/config/clock.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const clock = { ...systemClock, now: () => NOW, monotonic: () => 0 };

function response(status: number, headers: Record<string, string> = {}, body = ''): FetchedResponse {
  return {
    url: 'http://example.com/robots.txt',
    status,
    headers,
    mediaType: 'text/plain',
    contentType: 'text/plain',
    body: Buffer.from(body),
    truncated: false,
    durationMs: 1,
  };
}

/** The request pipeline of a node, with a fetcher that answers every request with `answer`. */
function pipeline(answer: FetchedResponse | FetchFailure): PipelineContext {
  return {
    fetcher: fetcher(answer),
    middleware: fetchMiddleware(
      'mountcrawl',
      () => true,
      () => NOW,
    ),
  };
}

/** A fetcher that answers every request with `answer` (a response, or a failure to throw). */
function fetcher(answer: FetchedResponse | FetchFailure): Fetcher {
  return {
    fetch: async () => {
      if (answer instanceof FetchFailure) throw answer;
      return answer;
    },
  } as unknown as Fetcher;
}

describe('RobotsCache: why robots.txt is unavailable', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'mountcrawl-robots-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  const rulesWith = (answer: FetchedResponse | FetchFailure): Promise<unknown> =>
    robotsRules(
      new RobotsCache(new Layout(root), { userAgent: 'mountcrawl', maxAgeMs: 1, nodeId: 'n', fsync: false }, clock),
      'example.com',
      'http://example.com',
      pipeline(answer),
    );

  test('a 503 with Retry-After: the HTTP code and the wait', async () => {
    await assert.rejects(rulesWith(response(503, { 'retry-after': '120' })), (err) => {
      assert.ok(err instanceof RobotsUnavailable);
      assert.equal(err.code, 'HTTP_503');
      assert.equal(err.kind, 'transient');
      assert.equal(err.retryAfterMs, 120_000);
      return true;
    });
  });

  test('a 429 with an HTTP date', async () => {
    const at = new Date(NOW + 30_000).toUTCString();
    await assert.rejects(rulesWith(response(429, { 'retry-after': at })), (err) => {
      assert.ok(err instanceof RobotsUnavailable);
      assert.equal(err.code, 'HTTP_429');
      assert.equal(err.retryAfterMs, 30_000);
      return true;
    });
  });

  test('a fetch failure keeps its code and kind (DNS_FAILED transient, TLS_ERROR final)', async () => {
    for (const [code, kind] of [
      ['DNS_FAILED', 'transient'],
      ['TLS_ERROR', 'final'],
      ['PRIVATE_ADDRESS', 'final'],
    ] as const) {
      await assert.rejects(rulesWith(new FetchFailure(code, kind, 'no')), (err) => {
        assert.ok(err instanceof RobotsUnavailable, code);
        assert.equal(err.code, code);
        assert.equal(err.kind, kind);
        assert.equal(err.retryAfterMs, undefined);
        return true;
      });
    }
  });

  test('a stop is not "unavailable": ABORTED goes through', async () => {
    await assert.rejects(rulesWith(new FetchFailure('ABORTED', 'transient', 'stopped')), (err) => {
      assert.ok(err instanceof FetchFailure && err.code === 'ABORTED');
      return true;
    });
  });
});

describe('parseRobots', () => {
  test('the product token of the user agent picks its group; wildcards and $ work', () => {
    const text = 'User-agent: *\nDisallow: /\n\nUser-agent: mountcrawl\nDisallow: /*.pdf$\nDisallow: /private/\nAllow: /private/open\n';
    const r = parseRobots(text, 'http://example.com/robots.txt', 'mountcrawl/0.1 (+https://example.org)', 'file');
    assert.equal(r.isAllowed('http://example.com/'), true);
    assert.equal(r.isAllowed('http://example.com/a/b.pdf'), false);
    assert.equal(r.isAllowed('http://example.com/a/b.pdf?x=1'), true);
    assert.equal(r.isAllowed('http://example.com/private/x'), false);
    assert.equal(r.isAllowed('http://example.com/private/open'), true);
    assert.equal(r.isAllowed('https://example.com/private/x'), false, 'the other scheme of the host too');
  });
});

describe('RobotsCache: redirects', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'mountcrawl-robots-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  test('a Location that is not an http(s) URL ends the chain: no robots.txt, everything allowed', async () => {
    for (const location of ['http://[bad/robots.txt', 'ftp://example.com/robots.txt', 'javascript:alert(1)']) {
      const cache = new RobotsCache(
        new Layout(join(root, String(location.length))),
        { userAgent: 'mountcrawl', maxAgeMs: 1, nodeId: 'n', fsync: false },
        clock,
      );
      const rules = await robotsRules(cache, 'example.com', 'http://example.com', pipeline(response(301, { location })));
      assert.equal(rules.source, 'none', location);
      assert.equal(rules.isAllowed('http://example.com/x'), true, location);
    }
  });
});
