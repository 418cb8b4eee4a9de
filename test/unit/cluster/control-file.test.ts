import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ControlRecord, orderFor, readControl, writeControl } from '../../../src/cluster/control-file.js';
import { systemClock } from '../../../src/config/clock.js';
import { Mount } from '../../../src/store/mount.js';
import { MemoryFs } from '../../support/memory-fs.js';

const at = '2026-11-27T12:00:00.000Z';
const given = (seq: number) => ({ seq, at, by: 'ops-1' });

describe('the control file', () => {
  test('orderFor: a stop or a drain given after the node started is for it; one given before is not; a pause in force always is', () => {
    const cases: [string, ControlRecord | undefined, string, number, string][] = [
      ['no file', undefined, 'a', 0, 'run'],
      ['nothing asked', { format: 1, seq: 0, drain: [] }, 'a', 0, 'run'],
      ['paused before it started', { format: 1, seq: 3, paused: given(3), drain: [] }, 'a', 3, 'pause'],
      ['paused after it started', { format: 1, seq: 4, paused: given(4), drain: [] }, 'a', 3, 'pause'],
      ['stop after it started', { format: 1, seq: 4, stop: given(4), drain: [] }, 'a', 3, 'stop'],
      ['stop before it started (an earlier run)', { format: 1, seq: 4, stop: given(4), drain: [] }, 'a', 4, 'run'],
      ['stop before it started, paused since', { format: 1, seq: 5, stop: given(4), paused: given(5), drain: [] }, 'a', 4, 'pause'],
      ['drain of it', { format: 1, seq: 2, drain: [{ ...given(2), node: 'a' }] }, 'a', 1, 'drain'],
      ['drain of another node', { format: 1, seq: 2, drain: [{ ...given(2), node: 'b' }] }, 'a', 1, 'run'],
      ['drain of it before it started (the same id again)', { format: 1, seq: 2, drain: [{ ...given(2), node: 'a' }] }, 'a', 2, 'run'],
      ['drain of a paused node', { format: 1, seq: 3, paused: given(3), drain: [{ ...given(2), node: 'a' }] }, 'a', 1, 'drain'],
      ['stop of a paused crawl', { format: 1, seq: 3, paused: given(2), stop: given(3), drain: [] }, 'a', 1, 'stop'],
    ];
    for (const [name, record, node, since, order] of cases) assert.equal(orderFor(record, node, since), order, name);
  });

  test('written whole and read back; absent before any command; a file that is not ours reads as torn', async () => {
    const fs = new MemoryFs(() => Date.now());
    const mount = new Mount(fs, systemClock); // a torn read is read again after a pause on this clock
    await fs.mkdir('/d');
    assert.equal(await readControl(mount, '/d'), 'absent');
    const record: ControlRecord = { format: 1, seq: 1, paused: given(1), drain: [] };
    await writeControl(mount, '/d', record, 'ops-1');
    assert.deepEqual(await readControl(mount, '/d'), record);
    assert.deepEqual(fs.files(), ['/d/.mountcrawl-control.json'], 'no temporary file left');
    await fs.writeNew('/d/x', '{"format":2}');
    await fs.rename('/d/x', '/d/.mountcrawl-control.json');
    assert.equal(await readControl(mount, '/d'), 'torn');
  });
});
