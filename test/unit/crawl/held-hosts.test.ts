import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadedOrHeld } from '../../../src/crawl/held-hosts.js';
import type { HostPhase, HostState } from '../../../src/frontier/host-state.js';
import { FakeClock } from '../../support/fake-clock.js';

/** A host whose take the test settles by hand, and a keeper that hands out its current take. */
function rig(): { host: HostState & { phase: HostPhase }; keeper: { loaded(): Promise<void> }; setPhase(p: HostPhase): void } {
  const state = { phase: 'blocked' as HostPhase };
  return {
    host: state as unknown as HostState & { phase: HostPhase },
    keeper: { loaded: () => Promise.resolve() },
    setPhase: (p) => (state.phase = p),
  };
}

async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe('loadedOrHeld', () => {
  test('a host taken (or let go) is loaded at once; no host, nothing to wait for', async () => {
    const clock = new FakeClock();
    const r = rig();
    r.setPhase('ready');
    assert.equal(await settled(loadedOrHeld(r.keeper, r.host, clock, clock.monotonic() + 1000)), true);
    assert.equal(await settled(loadedOrHeld(r.keeper, undefined, clock, clock.monotonic() + 1000)), true);
  });

  test('a host a peer still holds is waited for until its retried take gets the lease, so the scan reads the summary the peer wrote at its release', async () => {
    const clock = new FakeClock();
    const r = rig();
    const wait = loadedOrHeld(r.keeper, r.host, clock, clock.monotonic() + 1000);
    clock.advance(200);
    assert.equal(await settled(wait), false, 'still held: the scan waits');
    r.setPhase('ready');
    clock.advance(50);
    assert.equal(await settled(wait), true);
  });

  test('no longer than the deadline: a host still held after it is scanned as before', async () => {
    const clock = new FakeClock();
    const r = rig();
    const wait = loadedOrHeld(r.keeper, r.host, clock, clock.monotonic() + 300);
    clock.advance(250);
    assert.equal(await settled(wait), false);
    clock.advance(100);
    assert.equal(await settled(wait), true, 'given up at the deadline');
    // A reseed that is not full (deadline 0) never waits.
    assert.equal(await settled(loadedOrHeld(r.keeper, r.host, clock, 0)), true);
  });
});
