import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProcesses } from '../../src/config/processes.js';

test('--processes auto: one node per two cores, at least one; a number as given; anything else an error', () => {
  assert.equal(parseProcesses('auto', 1), 1);
  assert.equal(parseProcesses('auto', 2), 1);
  assert.equal(parseProcesses('AUTO', 3), 1);
  assert.equal(parseProcesses('auto', 8), 4);
  assert.equal(parseProcesses('3', 8), 3);
  assert.throws(() => parseProcesses('0', 8), /--processes must be a whole number >= 1/);
  assert.throws(() => parseProcesses('many', 8), /--processes must be a whole number >= 1/);
});
