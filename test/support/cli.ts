import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CLI as a user runs it: bin/mountcrawl.js of this checkout (built by `npm test`). */
export const BIN = fileURLToPath(new URL('../../../bin/mountcrawl.js', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Options every test crawl uses: fast heartbeats, no politeness delay, quiet. --dead-after
 * stays long: a node killed on this machine is seen dead at once anyway (its pid is gone),
 * and a short one would let a node starved of CPU on a busy machine be taken for dead.
 */
export const FAST = ['--delay', '0', '--heartbeat', '100', '--dead-after', '15000', '--no-progress', '--retry-delay', '0.2'];

/**
 * Starts the CLI; the caller owns the child (and must wait for it or kill it by pid). A
 * child still running after `timeoutMs` is killed, so a hung crawl fails its test instead
 * of hanging the suite.
 */
export function spawnCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 120_000,
): ChildProcess & { done: Promise<CliResult>; stderrSoFar: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], {
    // A proxy of the machine running the suite must not take the loopback test site's requests.
    env: { ...process.env, MOUNTCRAWL_DATA: '', HTTP_PROXY: '', HTTPS_PROXY: '', http_proxy: '', https_proxy: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return Object.assign(child, { done, stderrSoFar: () => stderr });
}

/** Runs the CLI to its end (killing it after `timeoutMs`). */
export async function runCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  return spawnCli(args, options.env, options.timeoutMs ?? 60_000).done;
}

/**
 * Kills (SIGKILL) the children of spawnCli still running and waits for them: for a test's
 * `finally`, so that a failed assertion is reported, not a cleanup of a directory a crawl
 * still writes to.
 */
export async function killLeft(...children: (ReturnType<typeof spawnCli> | undefined)[]): Promise<void> {
  for (const c of children) if (c !== undefined && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(children.map((c) => c?.done));
}

/**
 * A fresh temporary directory, removed by the returned cleanup. A crawl still writing into
 * it (a test that failed before it stopped its children) can make the removal fail: that is
 * said on stderr, not thrown, so that the test's own failure is the one reported.
 */
export async function tempDir(prefix = 'mountcrawl-test-'): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  const cleanup = (): Promise<void> =>
    rm(path, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 }).catch((err: unknown) => {
      process.stderr.write(`test cleanup: ${path} not removed: ${String(err)}\n`);
    });
  return { path, cleanup };
}

/** The end-of-run summary a node printed with --json (a line of its log, on stderr). */
export function jsonSummary<T = Record<string, unknown>>(r: CliResult): T {
  for (const line of r.stderr.split('\n')) {
    if (!line.includes('"summary"')) continue;
    const s = JSON.parse(line) as T & { msg?: string };
    if (s.msg === 'summary') return s;
  }
  throw new Error(`no summary line:\n${r.stderr}`);
}
