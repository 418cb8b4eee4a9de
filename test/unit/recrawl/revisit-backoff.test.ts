import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GONE_TRIES, REVISIT_TRIES, revisitBackoff } from '../../../src/recrawl/revisit-backoff.js';
import { parseDurationMs } from '../../../src/recrawl/duration.js';

test('a failing revisit waits 2, 4, 8 times its interval, then is retired', () => {
  const day = 86_400_000;
  assert.deepEqual(
    [1, 2, 3].map((n) => revisitBackoff(day, n, 503)),
    [2 * day, 4 * day, 8 * day],
  );
  assert.equal(revisitBackoff(day, REVISIT_TRIES, 503), undefined);
  assert.equal(revisitBackoff(day, REVISIT_TRIES, undefined), undefined);
});

test('a page that stays gone (404, 410) is retired sooner', () => {
  assert.equal(revisitBackoff(1_000, 1, 404), 2_000);
  assert.equal(revisitBackoff(1_000, GONE_TRIES, 404), undefined);
  assert.equal(revisitBackoff(1_000, GONE_TRIES, 410), undefined);
  assert.ok(GONE_TRIES < REVISIT_TRIES);
});

test('an interval of 0 still backs off (at least a second)', () => {
  assert.equal(revisitBackoff(0, 1, 500), 2_000);
});

test('durations: 0s, 90m, 7d, 1.5h, 500ms, 2w; anything else is refused', () => {
  assert.equal(parseDurationMs('0s'), 0);
  assert.equal(parseDurationMs('90m'), 90 * 60_000);
  assert.equal(parseDurationMs('7d'), 7 * 86_400_000);
  assert.equal(parseDurationMs('1.5h'), 5_400_000);
  assert.equal(parseDurationMs('500ms'), 500);
  assert.equal(parseDurationMs('2w'), 14 * 86_400_000);
  for (const bad of ['', '7', 'd', '-1d', '7 days', '1e3s']) assert.equal(parseDurationMs(bad), undefined, bad);
});

test('recrawl options: bad durations, bounds, a missing --recrawl-after and --partition url are refused', async () => {
  const { buildRecrawlPolicy } = await import('../../../src/cli/recrawl-options.js');
  assert.equal(buildRecrawlPolicy({}), undefined);
  // Without --watch a run visits each page once: 0s is fine there (every page due now).
  assert.equal(buildRecrawlPolicy({ recrawlAfter: '0s' })?.afterMs, 0);
  assert.equal(buildRecrawlPolicy({ recrawlAfter: '1s', watch: true })?.afterMs, 1000);
  assert.equal(buildRecrawlPolicy({ recrawlAfter: '1h', recrawlAdaptive: true, recrawlMin: '0s' })?.minMs, 0);
  assert.deepEqual(buildRecrawlPolicy({ recrawlAfter: '4d' }), {
    afterMs: 4 * 86_400_000,
    adaptive: false,
    minMs: 86_400_000,
    maxMs: 32 * 86_400_000,
  });
  for (const bad of [
    { recrawlAfter: 'weekly' },
    { recrawlAdaptive: true },
    { recrawlAfter: '1d', recrawlMin: '2d', recrawlMax: '1d' },
    { recrawlAfter: '1d', partition: 'url' },
    { recrawlAfter: '0s', watch: true },
    { recrawlAfter: '999ms', watch: true },
    { recrawlAfter: '1h', recrawlAdaptive: true, recrawlMin: '0s', watch: true },
  ]) {
    assert.throws(
      () => buildRecrawlPolicy(bad),
      (err: Error & { code?: string }) => err.code === 'BAD_OPTION',
      JSON.stringify(bad),
    );
  }
});
