import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrsTally, sampleCause } from '../../../src/store/errs-tally.js';
import type { ErrsRecord } from '../../../src/store/records.js';

const rec = (url: string, code: string, nextAttemptAt: string | null): ErrsRecord => ({
  v: 1,
  url,
  code,
  message: `${code} for ${url}`,
  final: nextAttemptAt === null,
  attempts: 1,
  firstAt: '2026-01-01T00:00:00.000Z',
  lastAt: '2026-01-01T00:00:00.000Z',
  nextAttemptAt,
  depth: 1,
  node: 'n1',
});

describe('ErrsTally', () => {
  test('counts by code, final or retrying, the earliest retry; a record replaced counts once; a page removes it', () => {
    const t = new ErrsTally();
    assert.deepEqual(t.count(3), { errors: 0, excluded: 0, retrying: 0, byCode: {}, nextMs: Infinity, sample: null });
    t.errs('k1', rec('http://a/1', 'HTTP_404', null));
    t.errs('k2', rec('http://a/2', 'HTTP_503', '2026-01-01T00:10:00.000Z'));
    t.errs('k3', rec('http://a/3', 'HTTP_503', '2026-01-01T00:05:00.000Z'));
    t.errs('k3', rec('http://a/3', 'HTTP_500', null)); // retried and failed for good
    t.page('k2'); // retried and fetched
    assert.deepEqual(t.count(3), {
      errors: 2,
      excluded: 0,
      retrying: 0,
      byCode: { HTTP_404: 1, HTTP_500: 1 },
      nextMs: Infinity,
      sample: { url: 'http://a/1', code: 'HTTP_404', message: 'HTTP_404 for http://a/1' },
    });
    t.errs('k4', rec('http://a/4', 'HTTP_503', '2026-01-01T00:05:00.000Z'));
    assert.equal(t.count(3).retrying, 1);
    assert.equal(t.count(3).nextMs, Date.parse('2026-01-01T00:05:00.000Z'));
    // A URL robots.txt excludes is counted, and counted apart: final, no failure (docs/errors.md).
    t.errs('k5', { ...rec('http://a/5', 'ROBOTS_DISALLOWED', null), final: true });
    assert.deepEqual([t.count(3).errors, t.count(3).excluded, t.count(3).byCode.ROBOTS_DISALLOWED], [4, 1, 1]);
  });

  test('a record not final with attempts at a lowered --max-attempts counts final, as the crawler takes it (isFinal)', () => {
    const t = new ErrsTally();
    t.errs('k1', { ...rec('http://a/1', 'HTTP_503', '2026-01-01T00:05:00.000Z'), attempts: 2 });
    t.errs('k2', { ...rec('http://a/2', 'HTTP_503', '2026-01-01T00:06:00.000Z'), attempts: 1 });
    assert.deepEqual([t.count(3).retrying, t.count(3).nextMs], [2, Date.parse('2026-01-01T00:05:00.000Z')]);
    assert.deepEqual([t.count(2).retrying, t.count(2).nextMs], [1, Date.parse('2026-01-01T00:06:00.000Z')]);
    assert.equal(t.count(1).retrying, 0);
  });

  test('the sample names a failure before an exclusion, whichever was recorded first', () => {
    const t = new ErrsTally();
    t.errs('k1', rec('http://a/private', 'ROBOTS_DISALLOWED', null));
    assert.equal(t.count(3).sample?.code, 'ROBOTS_DISALLOWED');
    t.errs('k2', rec('http://a/gone', 'HTTP_404', null));
    t.errs('k3', rec('http://a/also', 'ROBOTS_DISALLOWED', null));
    assert.deepEqual(t.count(3).sample, { url: 'http://a/gone', code: 'HTTP_404', message: 'HTTP_404 for http://a/gone' });
  });
});

describe('sampleCause', () => {
  test('keeps the first, unless it is an exclusion and the next a failure', () => {
    const robots = { code: 'ROBOTS_DISALLOWED' };
    const refused = { code: 'CONNECTION_REFUSED' };
    const timeout = { code: 'FETCH_TIMEOUT' };
    assert.equal(sampleCause(null, robots), robots);
    assert.equal(sampleCause(robots, refused), refused);
    assert.equal(sampleCause(refused, robots), refused);
    assert.equal(sampleCause(refused, timeout), refused);
    assert.equal(sampleCause(robots, null), robots);
  });
});
