import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PreviousVisits } from '../../../src/recrawl/previous-visits.js';
import { Layout } from '../../../src/store/layout.js';
import { FakeClock } from '../../support/fake-clock.js';
import { pageRecord } from '../../support/links-records.js';

const POLICY = { afterMs: 60_000, adaptive: false, minMs: 60_000, maxMs: 60_000 };
const URL_ = 'http://example.org/a';
const CAPTURED = '2025-01-15T11:59:59.987Z';

function visits(): PreviousVisits {
  return new PreviousVisits({ policy: POLICY, clock: new FakeClock({ wall: Date.UTC(2025, 0, 16) }), layout: new Layout('/nonexistent') });
}

test('a 304 keeps the stored copy and its capturedAt: the revisit names the capture whose content is kept', async () => {
  const v = visits();
  v.remember('example.org', 'k', pageRecord(URL_, { html: 'html/example.org/k.html', capturedAt: CAPTURED, signature: 'x' }));
  const now = pageRecord(URL_, { status: 304, html: null, capturedAt: '2025-01-16T00:00:00.000Z' });
  const { record, writeBody } = await v.pageRecord('example.org', 'k', now, null, true);
  assert.equal(record.capturedAt, CAPTURED);
  assert.equal(record.html, 'html/example.org/k.html');
  assert.equal(writeBody, false);
});

test('a 200 that changed the page carries the new capture time', async () => {
  const v = visits();
  v.remember('example.org', 'k', pageRecord(URL_, { html: 'html/example.org/k.html', capturedAt: CAPTURED, signature: 'old' }));
  const fresh = '2025-01-16T00:00:00.000Z';
  const now = pageRecord(URL_, { html: 'html/example.org/k.html', capturedAt: fresh });
  const { record, writeBody } = await v.pageRecord('example.org', 'k', now, Buffer.from('<html>new</html>'), false);
  assert.equal(record.capturedAt, fresh);
  assert.equal(writeBody, true);
});
