import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { childExecArgv } from '../../../src/cli/supervisor.js';

describe('childExecArgv', () => {
  test("a child gets the supervisor's flags and a 4 MiB young generation", () => {
    assert.deepEqual(childExecArgv([], undefined), ['--max-semi-space-size=4']);
    assert.deepEqual(childExecArgv(['--cpu-prof', '--cpu-prof-dir=/p'], ''), [
      '--cpu-prof',
      '--cpu-prof-dir=/p',
      '--max-semi-space-size=4',
    ]);
  });

  test('a young generation the user gave stands, on the command line or in NODE_OPTIONS', () => {
    assert.deepEqual(childExecArgv(['--max-semi-space-size=32'], undefined), ['--max-semi-space-size=32']);
    assert.deepEqual(childExecArgv(['--max-semi-space-size', '32'], undefined), ['--max-semi-space-size', '32']);
    assert.deepEqual(childExecArgv([], '--trace-warnings --max-semi-space-size=8'), []);
    assert.deepEqual(childExecArgv([], '--max-old-space-size=4096'), ['--max-semi-space-size=4'], 'another heap flag is not this one');
  });
});
