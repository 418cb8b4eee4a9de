import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PEER_VIEW_BEATS, SelfFence } from '../../../src/crawl/self-fence.js';
import { FakeClock } from '../../support/fake-clock.js';

const HEARTBEAT = 200;
const DEAD = 2_000;

/** A fence over a fake clock whose last record that reached the mount is `beat()`'s. */
function setup(): { clock: FakeClock; fence: SelfFence; beat: () => Promise<void> } {
  const clock = new FakeClock();
  let lastBeatOk = clock.monotonic();
  const fence = new SelfFence(clock, { heartbeatMs: HEARTBEAT, deadAfterMs: DEAD }, () => lastBeatOk);
  const beat = async (): Promise<void> => {
    fence.beforeRecord();
    lastBeatOk = clock.monotonic();
    fence.recordOut();
  };
  return { clock, fence, beat };
}

describe('SelfFence', () => {
  test('not fenced while records reach the mount; a read-back then changes nothing', async () => {
    const { clock, fence, beat } = setup();
    for (let i = 0; i < 5; i++) {
      clock.advance(HEARTBEAT);
      await beat();
      assert.equal(fence.fenced(), false);
      await fence.readLeasesBack(async () => undefined);
      assert.equal(fence.fenced(), false);
    }
  });

  test('fenced after dead-after / 2 without a record; a record that goes out then keeps it fenced until the leases are read back a while after it', async () => {
    const { clock, fence, beat } = setup();
    clock.advance(DEAD / 2 + 1);
    assert.equal(fence.fenced(), true, 'silent for more than dead-after / 2');
    assert.equal(fence.beforeRecord(), true, 'the record goes out fenced');
    await beat();
    assert.equal(fence.fenced(), true, 'the record got through, the leases are in doubt');
    let reads = 0;
    await fence.readLeasesBack(async () => {
      reads++;
    });
    assert.equal(fence.fenced(), true, 'read back at once: a peer that read nodes/ before the record may still take a host over');
    clock.advance(PEER_VIEW_BEATS * HEARTBEAT - 1);
    await fence.readLeasesBack(async () => {
      reads++;
    });
    assert.equal(fence.fenced(), true, 'one ms too soon');
    clock.advance(1);
    await fence.readLeasesBack(async () => {
      clock.advance(50); // the reads take a while: it is when they began that counts
      reads++;
    });
    assert.equal(fence.fenced(), false);
    assert.equal(reads, 3);
  });

  test('a second silence while fenced counts from the record after it', async () => {
    const { clock, fence, beat } = setup();
    clock.advance(DEAD);
    await beat();
    clock.advance(DEAD);
    await beat();
    clock.advance(PEER_VIEW_BEATS * HEARTBEAT - 1);
    await fence.readLeasesBack(async () => undefined);
    assert.equal(fence.fenced(), true, 'within the view time of the second record');
    clock.advance(1);
    await fence.readLeasesBack(async () => undefined);
    assert.equal(fence.fenced(), false);
  });

  test('a read-back that fails leaves the fence up', async () => {
    const { clock, fence, beat } = setup();
    clock.advance(DEAD);
    await beat();
    clock.advance(PEER_VIEW_BEATS * HEARTBEAT);
    await assert.rejects(
      fence.readLeasesBack(async () => {
        throw Object.assign(new Error('EIO'), { code: 'EIO' });
      }),
      { code: 'EIO' },
    );
    assert.equal(fence.fenced(), true);
  });
});
