import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SelfFence } from '../../../src/crawl/self-fence.js';

describe('SelfFence (docs/protocol.md, "Self-fencing")', () => {
  test('silent for half of dead-after: fenced; a beat that goes out then keeps the fence for two read-backs of the leases', () => {
    let silent = 0;
    const fence = new SelfFence(() => silent, 2_000);
    assert.equal(fence.fenced, false);
    assert.equal(fence.beatGoesOut(), false, 'a beat in time goes out unfenced');
    silent = 1_001;
    assert.equal(fence.fenced, true);
    assert.equal(fence.beatGoesOut(), true);
    silent = 0; // that beat got through
    assert.equal(fence.fenced, true, 'not before the leases are read back');
    fence.leasesReadBack();
    assert.equal(fence.fenced, true, 'one read-back is not enough: a takeover decided on an older view may land after it');
    assert.equal(fence.beatGoesOut(), true, 'the next beat reads every lease back again');
    fence.leasesReadBack();
    assert.equal(fence.fenced, false);
    fence.leasesReadBack();
    assert.equal(fence.beatGoesOut(), false, 'read-backs are not banked');
  });
});
