import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildErrsRecord, buildLinksRecord } from '../../../src/commit/build-records.js';
import type { Commit, Target } from '../../../src/fetch/page-outcome.js';
import { FetchFailure } from '../../../src/errors.js';
import type { FetchedResponse } from '../../../src/fetch/fetcher.js';
import { RECORD_VERSION, type ErrsRecord } from '../../../src/store/records.js';

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const TARGET: Target = { url: 'http://example.org/a', key: 'k'.repeat(56), hostDir: 'example.org', depth: 3 };

function response(extra: Partial<FetchedResponse> = {}): FetchedResponse {
  return {
    url: TARGET.url,
    status: 200,
    headers: {},
    mediaType: 'text/html',
    contentType: 'text/html; charset=utf-8',
    body: Buffer.from('<html>'),
    truncated: false,
    durationMs: 12,
    ...extra,
  };
}

type PageCommit = Extract<Commit, { type: 'page' }>;
function page(extra: Partial<PageCommit> = {}): PageCommit {
  const res = extra.response ?? response();
  return {
    type: 'page',
    target: TARGET,
    response: res,
    finalUrl: TARGET.url,
    redirects: [],
    body: res.body,
    links: ['http://example.org/b'],
    ...extra,
  };
}

describe('buildLinksRecord', () => {
  test('a page: every field from the commit and response; optional ones absent when empty', () => {
    const r = buildLinksRecord(page(), { nodeId: 'ws1-100', nowMs: NOW, htmlPath: 'html/example.org/k.html' });
    assert.deepEqual(r, {
      v: RECORD_VERSION,
      url: TARGET.url,
      finalUrl: TARGET.url,
      status: 200,
      contentType: 'text/html; charset=utf-8',
      bytes: 6,
      fetchedAt: '2025-01-15T12:00:00.000Z',
      depth: 3,
      node: 'ws1-100',
      durationMs: 12,
      html: 'html/example.org/k.html',
      links: ['http://example.org/b'],
    });
    assert.deepEqual(Object.keys(r).at(-1), 'links', 'links last: the long part at the end of the file');
  });

  test("with a capture (--warc): capturedAt is the request start, the response record's WARC-Date", () => {
    const r = buildLinksRecord(page({ response: response({ capturedMs: NOW - 13 }) }), { nodeId: 'n', nowMs: NOW, htmlPath: null });
    assert.equal(r.capturedAt, '2025-01-15T11:59:59.987Z');
    assert.equal(r.fetchedAt, '2025-01-15T12:00:00.000Z');
  });

  test('validators, charset, redirects, hook data and truncation are kept', () => {
    // undici gives a repeated header as an array.
    const headers = { etag: ['"v1"', '"v2"'], 'last-modified': 'Wed, 21 Oct 2015 07:28:00 GMT' } as unknown as FetchedResponse['headers'];
    const res = response({ headers, truncated: true });
    const r = buildLinksRecord(
      page({
        response: res,
        charset: 'windows-1252',
        redirects: [{ url: 'http://example.org/a', status: 301, location: 'http://example.org/c' }],
        data: { title: 'x' },
      }),
      { nodeId: 'n', nowMs: NOW, htmlPath: null },
    );
    assert.equal(r.etag, '"v1"', 'the first of repeated headers');
    assert.equal(r.lastModified, 'Wed, 21 Oct 2015 07:28:00 GMT');
    assert.equal(r.charset, 'windows-1252');
    assert.equal(r.truncated, true);
    assert.deepEqual(r.redirects, [{ url: 'http://example.org/a', status: 301, location: 'http://example.org/c' }]);
    assert.deepEqual(r.data, { title: 'x' });
    assert.equal(r.html, null);
  });

  test('a redirect or non-HTML commit: no body, 0 bytes, never truncated', () => {
    const r = buildLinksRecord(page({ response: response({ status: 302, body: null, truncated: true }), body: null }), {
      nodeId: 'n',
      nowMs: NOW,
      htmlPath: null,
    });
    assert.equal(r.bytes, 0);
    assert.equal(r.status, 302);
    assert.equal('truncated' in r, false);
  });
});

describe('buildErrsRecord', () => {
  const failure = new FetchFailure('HTTP_503', 'transient', 'HTTP 503', { status: 503 });

  test('a first transient failure: attempt 1, next attempt after retryInMs', () => {
    const r = buildErrsRecord(TARGET, failure, undefined, { nodeId: 'ws1-100', nowMs: NOW, retryInMs: 30_000 });
    assert.deepEqual(r, {
      v: RECORD_VERSION,
      url: TARGET.url,
      code: 'HTTP_503',
      message: 'HTTP 503',
      status: 503,
      final: false,
      attempts: 1,
      firstAt: '2025-01-15T12:00:00.000Z',
      lastAt: '2025-01-15T12:00:00.000Z',
      nextAttemptAt: '2025-01-15T12:00:30.000Z',
      depth: 3,
      node: 'ws1-100',
    } satisfies ErrsRecord);
  });

  test('a later failure counts on from the previous record and keeps its first time; final has no next attempt', () => {
    const first = buildErrsRecord(TARGET, failure, undefined, { nodeId: 'a', nowMs: NOW, retryInMs: 30_000 });
    const timeout = new FetchFailure('FETCH_TIMEOUT', 'transient', 'x'.repeat(2_000));
    const last = buildErrsRecord(TARGET, timeout, first, { nodeId: 'b', nowMs: NOW + 60_000, retryInMs: undefined });
    assert.equal(last.attempts, 2);
    assert.equal(last.firstAt, first.firstAt);
    assert.equal(last.lastAt, '2025-01-15T12:01:00.000Z');
    assert.equal(last.final, true);
    assert.equal(last.nextAttemptAt, null);
    assert.equal(last.code, 'FETCH_TIMEOUT');
    assert.equal(last.node, 'b');
    assert.equal(last.message.length, 500, 'long messages are cut');
    assert.equal('status' in last, false);
  });

  test('the referrer: the first page that linked to the URL, kept from the earlier record; none for a seed', () => {
    const failure = new FetchFailure('HTTP_404', 'final', 'HTTP 404', { status: 404 });
    assert.equal('referrer' in buildErrsRecord(TARGET, failure, undefined, { nodeId: 'a', nowMs: NOW, retryInMs: undefined }), false);
    const linked: Target = { ...TARGET, referrer: { url: 'http://example.org/', depth: 2 } };
    const first = buildErrsRecord(linked, failure, undefined, { nodeId: 'a', nowMs: NOW, retryInMs: 1_000 });
    assert.deepEqual(first.referrer, { url: 'http://example.org/', depth: 2 });
    const other: Target = { ...TARGET, referrer: { url: 'http://example.org/other', depth: 2 } };
    assert.deepEqual(buildErrsRecord(other, failure, first, { nodeId: 'a', nowMs: NOW, retryInMs: undefined }).referrer, first.referrer);
  });
});
