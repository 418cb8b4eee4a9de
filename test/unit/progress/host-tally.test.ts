import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HostTally, onlyWhenChanged } from '../../../src/progress/host-tally.js';

describe('HostTally: distinct hosts across nodes', () => {
  test('a host two nodes report (--partition url, or a hand-over in progress) counts once', () => {
    const t = new HostTally();
    assert.equal(t.known, false);
    t.set(0, ['a', 'b']);
    t.set(1, ['b', 'c']);
    assert.equal(t.known, true);
    assert.equal(t.count, 3);
    t.set(1, ['a']);
    assert.equal(t.count, 2, 'a node replaces what it said before');
    t.forget(0);
    assert.equal(t.count, 1);
    t.set(0, []);
    assert.equal(t.count, 1);
  });

  test('onlyWhenChanged: the list when it changed, in any order, else undefined', () => {
    const changed = onlyWhenChanged();
    assert.deepEqual(changed(['b', 'a']), ['a', 'b']);
    assert.equal(changed(['a', 'b']), undefined);
    assert.equal(changed(['b', 'a']), undefined);
    assert.deepEqual(changed(['a']), ['a']);
    assert.deepEqual(changed([]), []);
    assert.equal(changed([]), undefined);
  });
});
