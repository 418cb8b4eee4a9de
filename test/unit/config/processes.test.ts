import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProcesses, processesWarning } from '../../../src/config/processes.js';

test('--processes auto: one node per two cores, at least one; a number as given; anything else an error', () => {
  assert.equal(parseProcesses('auto', 1), 1);
  assert.equal(parseProcesses('auto', 2), 1);
  assert.equal(parseProcesses('AUTO', 3), 1);
  assert.equal(parseProcesses('auto', 8), 4);
  assert.equal(parseProcesses('3', 8), 3);
  assert.throws(() => parseProcesses('0', 8), /--processes must be a whole number >= 1/);
  assert.throws(() => parseProcesses('many', 8), /--processes must be a whole number >= 1/);
});

test('processesWarning: above two nodes a core, one line that names the cores and what auto starts', () => {
  assert.equal(processesWarning(4, 2), undefined);
  assert.equal(processesWarning(1, 1), undefined);
  assert.equal(
    processesWarning(5, 2),
    '--processes 5 on 2 cores: each node keeps about a core busy, so more than 4 slow each other down (--processes auto starts 1)',
  );
  assert.match(processesWarning(64, 8)!, /^--processes 64 on 8 cores: .* more than 16 .*auto starts 4\)$/);
});
