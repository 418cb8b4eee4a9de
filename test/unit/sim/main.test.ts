import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

const MAIN = fileURLToPath(new URL('../../../src/sim/main.js', import.meta.url));

function sim(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('npm run sim', { timeout: 300_000 }, () => {
  test('--seed prints the same run twice, from two processes (temporary and hand-off names aside, which the trace blanks)', () => {
    const a = sim('--seed', '10', '--verbose');
    const b = sim('--seed', '10', '--verbose');
    assert.equal(a.status, 0, a.stderr);
    assert.equal(a.stdout, b.stdout);
    assert.match(a.stdout, /^seed 10: .* trace [0-9a-f]{16}: ok$/m);
    assert.match(a.stdout, /^1 runs, 0 violations in 0 seeds; faults injected: kill 0, .*long-pause 1, join 2,/m);
  });

  test('a run that breaks a property exits 1 and names the violation', () => {
    const r = sim('--seed', '3', '--cache-ms', '0', '--mutation', 'link-replaces');
    assert.equal(r.status, 1);
    assert.match(r.stdout, /violation: per-host: /);
  });

  test('--help prints the usage on stdout and exits 0', () => {
    const r = sim('--help');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage: npm run sim -- \(--seed S \| --seeds A\.\.B\)/);
  });

  test('bad input: one line, exit 2', () => {
    for (const args of [
      ['--seeds', '5..3'],
      ['--seed', 'x'],
      ['--mutation', 'nope', '--seed', '1'],
      ['--scenario', 'nope', '--seed', '1'],
      [],
    ]) {
      const r = sim(...args);
      assert.equal(r.status, 2, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^mountcrawl sim: /);
    }
  });
});
