import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { WARCParser } from 'warcio';
import { type Clock, systemClock } from '../../../src/config/clock.js';
import type { Logger } from '../../../src/progress/logger.js';
import { CaptureDates } from '../../../src/warc/capture-dates.js';
import { WarcCapture } from '../../../src/warc/warc-capture.js';
import { exchange } from '../../support/warc-left-open.js';

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A wall clock set by the test (files are named after it). */
function clockAt(ms: { now: number }): Clock {
  return { ...systemClock, now: () => ms.now };
}

/**
 * WARC-Refers-To-Date is the WARC-Date of the capture a revisit refers to (WARC 1.1, 5.13):
 * wabac.js (ReplayWeb.page) looks the original up at exactly that time, to the millisecond,
 * and finds the revisit itself when the date is later than the capture's (docs/warc.md).
 */
describe('a revisit names the WARC-Date of its capture, found in the indexes (docs/warc.md)', () => {
  test('the stored copy is committed after its record: the record of that URL at or before that time is found', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-capture-dates-'));
    try {
      const t0 = Date.UTC(2026, 10, 23, 12); // the request of exchange(), its WARC-Date
      const time = { now: t0 + 80 };
      const capture = new WarcCapture(
        { dir, nodeId: 'n1', maxSize: 1 << 20, software: 'test', userAgent: 'test', robots: true, fsync: false },
        { clock: clockAt(time), log: quiet },
      );
      capture.capture(exchange('page', '<p>one</p>'));
      capture.capture(exchange('other', '<p>other</p>'));
      await capture.flush();
      const committedAt = new Date(t0 + 95).toISOString();
      const dates = new CaptureDates(dir);
      // Found in a file still being written.
      assert.equal(await dates.dateOf('http://127.0.0.1:9/page', committedAt), new Date(t0).toISOString());
      // A later capture of the page (another day) is not the one committed before.
      time.now = t0 + 86_400_000;
      capture.capture({ ...exchange('page', '<p>two</p>'), startedMs: t0 + 86_400_000 - 500 });
      await capture.close();
      assert.equal(await dates.dateOf('http://127.0.0.1:9/page', committedAt), new Date(t0).toISOString());
      assert.equal(
        await new CaptureDates(dir).dateOf('http://127.0.0.1:9/page', new Date(t0 + 86_400_000 + 20).toISOString()),
        new Date(t0 + 86_400_000 - 500).toISOString(),
      );
      // Nothing before the first capture, nothing for a URL never captured.
      assert.equal(await dates.dateOf('http://127.0.0.1:9/page', new Date(t0 - 1).toISOString()), undefined);
      assert.equal(await dates.dateOf('http://127.0.0.1:9/never', committedAt), undefined);
      assert.equal(await new CaptureDates(join(dir, 'missing')).dateOf('http://127.0.0.1:9/page', committedAt), undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a 304 of a recrawl is written naming that WARC-Date, not the commit time of its stored copy', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-capture-dates-'));
    try {
      const t0 = Date.UTC(2026, 10, 23, 12);
      const time = { now: t0 + 40 };
      const capture = new WarcCapture(
        { dir, nodeId: 'n1', maxSize: 1 << 20, software: 'test', userAgent: 'test', robots: true, fsync: false },
        { clock: clockAt(time), log: quiet },
      );
      capture.capture(exchange('page', '<p>one</p>'));
      await capture.flush();
      time.now = t0 + 3_600_000;
      capture.capture({
        ...exchange('page', ''),
        startedMs: t0 + 3_600_000 - 10,
        status: 304,
        statusText: 'Not Modified',
        rawHeaders: ['ETag', '"v1"'],
        body: null,
        refersTo: { url: 'http://127.0.0.1:9/page', fetchedAt: new Date(t0 + 57).toISOString() },
      });
      await capture.close();
      const refers: (string | null | undefined)[] = [];
      for (const name of (await readdir(dir)).filter((n) => n.endsWith('.warc.gz'))) {
        for await (const record of new WARCParser(createReadStream(join(dir, name)))) {
          if (record.warcType === 'revisit') refers.push(record.warcRefersToDate);
        }
      }
      assert.deepEqual(refers, [new Date(t0).toISOString()]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
