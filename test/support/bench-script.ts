import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { haveGnuTime } from '../../bench/measure.js';

/** The built bench script `name` (`read-speed.js`: dist/bench/read-speed.js). */
export function benchScript(name: string): string {
  return fileURLToPath(new URL(`../../bench/${name}`, import.meta.url));
}

/** Runs a bench script (or any node arguments) in a child process; its exit code, stdout and stderr. */
export function runNode(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/**
 * True when GNU time (/usr/bin/time), which the memory benches read peak RSS with, is here;
 * otherwise skips the test, or fails it under CI (.ci/run installs it).
 */
export function gnuTimeOrSkip(t: TestContext): boolean {
  if (haveGnuTime()) return true;
  if (process.env.CI !== undefined) assert.fail('GNU time (/usr/bin/time) is missing in CI: .ci/run installs it');
  t.skip('GNU time (/usr/bin/time) is not installed');
  return false;
}
