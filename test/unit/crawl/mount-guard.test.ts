import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MountGuard } from '../../../src/crawl/mount-guard.js';
import type { Logger } from '../../../src/progress/logger.js';
import type { Marker } from '../../../src/store/data-dir.js';
import { Layout } from '../../../src/store/layout.js';
import { FakeClock } from '../../support/fake-clock.js';

const RETRY = 30_000;
const EIO = Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });

function setup(): { clock: FakeClock; guard: MountGuard; lines: string[] } {
  const clock = new FakeClock(); // its monotonic time starts far past RETRY, as a process's may
  const lines: string[] = [];
  const log: Logger = { debug: () => undefined, info: () => undefined, warn: (m) => lines.push(m), error: (m) => lines.push(m) };
  const marker = { id: 'x' } as Marker;
  const guard = new MountGuard({ dataDir: '/data', retryMs: RETRY, clock, log, layout: new Layout('/data'), marker });
  return { clock, guard, lines };
}

describe('MountGuard: how long a fault is waited out', () => {
  test('a fault expires --mount-retry after its first failure, not before', () => {
    const { clock, guard, lines } = setup();
    assert.equal(guard.classify(EIO)?.code, 'MOUNT_IO');
    assert.match(lines[0]!, /retrying the mount for 30 s/);
    clock.advance(RETRY);
    assert.equal(guard.expired(), false);
    clock.advance(1);
    assert.equal(guard.expired(), true);
  });

  test('a page stored during a fault starts its clock again (it gave up at once: counted from the clock origin)', () => {
    const { clock, guard } = setup();
    guard.classify(EIO);
    clock.advance(10_000);
    guard.stored(); // a page in flight when the fault came, written once the mount answered
    assert.equal(guard.expired(), false);
    clock.advance(RETRY);
    assert.equal(guard.expired(), false, 'counted from the page');
    clock.advance(1);
    assert.equal(guard.expired(), true);
  });

  test('a page stored between faults: the next fault has its whole time', () => {
    const { clock, guard } = setup();
    guard.classify(EIO);
    clock.advance(20_000);
    guard.cleared();
    guard.stored();
    clock.advance(5_000);
    guard.classify(EIO);
    clock.advance(RETRY);
    assert.equal(guard.expired(), false);
  });
});
