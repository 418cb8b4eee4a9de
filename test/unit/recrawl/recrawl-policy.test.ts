import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEC_RATE, INC_RATE, nextIntervalMs, type RecrawlPolicy } from '../../../src/recrawl/recrawl-policy.js';
import { HISTORY_LENGTH, withVisit } from '../../../src/recrawl/visit-record.js';
import type { LinksRecord } from '../../../src/store/records.js';
import { FakeClock } from '../../support/fake-clock.js';

const DAY = 86_400_000;
const ADAPTIVE: RecrawlPolicy = { afterMs: 7 * DAY, adaptive: true, minMs: DAY, maxMs: 30 * DAY };

function firstRecord(clock: FakeClock, policy: RecrawlPolicy): LinksRecord {
  const base = {
    v: 1,
    url: 'http://127.0.0.2/p',
    finalUrl: 'http://127.0.0.2/p',
    status: 200,
    contentType: 'text/html',
    bytes: 10,
    fetchedAt: new Date(clock.now()).toISOString(),
    depth: 0,
    node: 'n',
    durationMs: 1,
    html: 'html/x/y.html',
    links: [],
  } satisfies LinksRecord;
  return withVisit(base, { nowMs: clock.now(), status: 200, changed: true, bytes: 10, policy, first: true });
}

/** Visits a page each time it is due, on a fake clock; `changed(i)` says whether visit i finds it changed. */
function visit(policy: RecrawlPolicy, visits: number, changed: (i: number) => boolean): LinksRecord[] {
  const clock = new FakeClock();
  let r = firstRecord(clock, policy);
  const seen = [r];
  for (let i = 0; i < visits; i++) {
    clock.advance(Date.parse(r.nextFetchAt!) - clock.now());
    r = withVisit(r, { nowMs: clock.now(), status: changed(i) ? 200 : 304, changed: changed(i), bytes: 0, policy });
    seen.push(r);
  }
  return seen;
}

describe('adaptive revisit intervals (Nutch AdaptiveFetchSchedule rates, docs/recrawl.md)', () => {
  test('the first interval is --recrawl-after', () => {
    const r = firstRecord(new FakeClock(), ADAPTIVE);
    assert.equal(r.intervalMs, 7 * DAY);
    assert.equal(Date.parse(r.nextFetchAt!) - Date.parse(r.fetchedAt), 7 * DAY);
  });

  test('a page that never changes grows by INC_RATE a visit and reaches --recrawl-max, then stays there', () => {
    const seen = visit(ADAPTIVE, 12, () => false);
    assert.equal(seen[1]!.intervalMs, Math.round(7 * DAY * (1 + INC_RATE)));
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]!.intervalMs! >= seen[i - 1]!.intervalMs!);
    assert.equal(seen.at(-1)!.intervalMs, 30 * DAY);
    assert.equal(seen.at(-2)!.intervalMs, 30 * DAY);
    // Its change time stays the first fetch's.
    assert.equal(seen.at(-1)!.changedAt, seen[0]!.changedAt);
  });

  test('a page that changes at every visit shrinks by DEC_RATE a visit and converges to --recrawl-min', () => {
    const seen = visit(ADAPTIVE, 12, () => true);
    assert.equal(seen[1]!.intervalMs, Math.round(7 * DAY * (1 - DEC_RATE)));
    assert.equal(seen.at(-1)!.intervalMs, DAY);
    assert.equal(seen.at(-1)!.changedAt, seen.at(-1)!.fetchedAt);
  });

  test('without --recrawl-adaptive the interval is always --recrawl-after', () => {
    const fixed = { ...ADAPTIVE, adaptive: false };
    for (const r of visit(fixed, 5, (i) => i % 2 === 0)) assert.equal(r.intervalMs, 7 * DAY);
    assert.equal(nextIntervalMs(3 * DAY, true, fixed), 7 * DAY);
  });

  test('the history keeps the last visits, newest last', () => {
    const seen = visit(ADAPTIVE, HISTORY_LENGTH + 3, (i) => i === HISTORY_LENGTH + 2);
    const h = seen.at(-1)!.history!;
    assert.equal(h.length, HISTORY_LENGTH);
    assert.deepEqual(h.at(-1), { at: seen.at(-1)!.fetchedAt, status: 200, changed: true, bytes: 0 });
    assert.equal(h.at(-2)!.status, 304);
    assert.equal(h.at(-2)!.changed, false);
  });
});
