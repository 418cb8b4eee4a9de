import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseRetryAfter } from '../../../src/fetch/retry-after.js';

/** 2015-10-21 07:27:00 GMT: one minute before the dates below. */
const NOW = Date.UTC(2015, 9, 21, 7, 27, 0);

describe('parseRetryAfter: delay-seconds (RFC 9110 §10.2.3)', () => {
  test('a whole number of seconds becomes milliseconds, whatever the clock says', () => {
    assert.equal(parseRetryAfter('120', NOW), 120_000);
    assert.equal(parseRetryAfter('0', NOW), 0);
    assert.equal(parseRetryAfter(' 5 ', NOW), 5_000);
    assert.equal(parseRetryAfter('120', 0), 120_000);
  });

  test('anything else that looks like a number is not a delay', () => {
    for (const v of ['-1', '1.5', '1e3', '+5', '0x10', '']) assert.equal(parseRetryAfter(v, NOW), undefined, v);
  });
});

describe('parseRetryAfter: HTTP-date', () => {
  test('IMF-fixdate', () => {
    assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', NOW), 60_000);
  });

  test('obsolete RFC 850 form', () => {
    assert.equal(parseRetryAfter('Wednesday, 21-Oct-15 07:28:00 GMT', NOW), 60_000);
  });

  test('obsolete asctime form, which is GMT although it names no zone', () => {
    assert.equal(parseRetryAfter('Wed Oct 21 07:28:00 2015', NOW), 60_000);
    // A day of one digit is padded with a space.
    assert.equal(parseRetryAfter('Sun Nov  6 08:49:37 1994', Date.UTC(1994, 10, 6, 8, 49, 0)), 37_000);
  });

  test('asctime is read as GMT whatever the local time zone is', () => {
    const saved = process.env.TZ;
    try {
      for (const tz of ['Asia/Tokyo', 'America/Los_Angeles', 'UTC']) {
        process.env.TZ = tz;
        assert.equal(parseRetryAfter('Wed Oct 21 07:28:00 2015', NOW), 60_000, tz);
        assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', NOW), 60_000, tz);
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  test('a date in the past means no wait', () => {
    assert.equal(parseRetryAfter('Tue, 20 Oct 2015 07:28:00 GMT', NOW), 0);
    assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:27:00 GMT', NOW), 0);
  });

  test('a value that is no date at all is undefined', () => {
    for (const v of ['soon', 'Wed, 32 Oct 2015 07:28:00 GMT', '12abc', 'tomorrow at noon']) {
      assert.equal(parseRetryAfter(v, NOW), undefined, v);
    }
  });
});

test('parseRetryAfter: no header', () => {
  assert.equal(parseRetryAfter(undefined, NOW), undefined);
});
