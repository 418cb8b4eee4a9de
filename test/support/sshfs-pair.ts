import { execFile, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Two (or N) real sshfs mounts of one export on this machine, for tests that need a shared
 * mount with separate caches (docs/architecture.md, "Tests"). Runs mount-example/sshfs-pair.sh in a fresh temp dir.
 *
 * Use it so that sshd and the mounts go away even when the test fails:
 *
 *   test('over sshfs', async (t) => {
 *     const pair = await startSshfsPair(2);
 *     if ('skip' in pair) return t.skip(pair.skip);
 *     t.after(() => pair.stop());          // runs whether the test passes, fails or times out
 *     ...
 *   });
 *
 * or `try { ... } finally { await pair.stop(); }` in code that is not a test. `stop()` may be
 * called any number of times. As a last resort, pairs still running when the process exits
 * are stopped synchronously from an 'exit' handler (not on a signal that kills node).
 */
export interface SshfsPair {
  /** Mount points, one per simulated machine: each shows the same `export` directory. */
  readonly mounts: string[];
  /** The exported directory itself (local, not through sshfs); holds the script's sentinel `.sshfs-pair`. */
  readonly export: string;
  /** With `requestLog`: each mount's log of the SFTP requests its sshfs sent (`sshfs_debug`), one per mount. */
  readonly requestLogs: string[];
  /** Unmounts, stops sshd and removes the temp dir; idempotent. */
  stop(): Promise<void>;
}

/** Exit status of `sshfs-pair.sh` when something it needs is not there. */
const MISSING = 3;

/** The script, found from this file: dist/test/support/ -> repository root. */
export const SSHFS_PAIR_SCRIPT = fileURLToPath(new URL('../../../mount-example/sshfs-pair.sh', import.meta.url));

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: string[], timeoutMs: number, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile('bash', [SSHFS_PAIR_SCRIPT, ...args], { timeout: timeoutMs, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      const why = err?.killed === true ? `timed out after ${timeoutMs / 1000} s` : err?.message;
      resolve({ code, stdout, stderr: err !== null && code === -1 ? `${stderr}${why}` : stderr });
    });
  });
}

const lastLine = (text: string): string => text.trim().split('\n').pop() ?? '';

/** Pairs started and not yet stopped, by directory: stopped at process exit if still there. */
const running = new Set<string>();
let exitHookInstalled = false;

function stopAllAtExit(): void {
  for (const dir of running) {
    const res = spawnSync('bash', [SSHFS_PAIR_SCRIPT, 'stop', dir], { stdio: 'ignore', timeout: 20_000 });
    if (res.status === 0 && noMountsUnder(dir)) rmSync(dir, { recursive: true, force: true });
  }
}

/** True when no mount below `dir` is left in the mount table (so removing it is safe). */
function noMountsUnder(dir: string): boolean {
  const table = readFileSync('/proc/self/mounts', 'utf8');
  return !table.split('\n').some((line) => {
    const point = (line.split(' ')[1] ?? '').replace(/\\040/g, ' ');
    return point === dir || point.startsWith(`${dir}/`);
  });
}

/**
 * Starts `n` sshfs mounts of one export, or returns `{ skip }` with the reason when this
 * machine cannot (no sshd, sshfs, fusermount3 or usable /dev/fuse: see .ci/run). Other
 * failures (the script broke) throw, so that they are seen. `address`: where its sshd listens
 * (SSHFS_PAIR_ADDRESS; 127.0.0.1 by default).
 */
export async function startSshfsPair(
  n = 2,
  options: { requestLog?: boolean; address?: string } = {},
): Promise<SshfsPair | { skip: string }> {
  if (process.platform !== 'linux') return { skip: `sshfs pair needs Linux (FUSE), not ${process.platform}` };
  const check = await run(['check'], 10_000);
  if (check.code === MISSING) return { skip: lastLine(check.stdout) || 'sshfs prerequisites missing' };
  if (check.code !== 0) return { skip: `sshfs-pair.sh check failed: ${lastLine(check.stderr || check.stdout)}` };

  const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-sshfs-'));
  running.add(dir);
  if (!exitHookInstalled) {
    process.on('exit', stopAllAtExit);
    exitHookInstalled = true;
  }

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // Unmounts, then waits for each sshfs and sshd to exit: seconds, but over 30 s once on a machine at load 16.
      const res = await run(['stop', dir], 90_000);
      if (res.code !== 0) throw new Error(`sshfs-pair.sh stop ${dir} failed: ${lastLine(res.stderr)}`);
      running.delete(dir); // on failure the exit handler tries once more
      if (noMountsUnder(dir)) await rm(dir, { recursive: true, force: true });
    })();
    return stopping;
  };

  const started = await run(['start', dir, String(n)], 60_000, {
    ...(options.requestLog === true ? { SSHFS_PAIR_MOUNT_OPTS: 'sshfs_debug' } : {}),
    ...(options.address !== undefined ? { SSHFS_PAIR_ADDRESS: options.address } : {}),
  });
  if (started.code !== 0) {
    await stop().catch(() => undefined);
    if (started.code === MISSING) return { skip: lastLine(started.stdout) || lastLine(started.stderr) };
    throw new Error(`sshfs-pair.sh start failed (exit ${started.code}): ${started.stderr.trim()}`);
  }
  const mounts = started.stdout.split('\n').filter((line) => line !== '');
  if (mounts.length !== n) {
    await stop().catch(() => undefined);
    throw new Error(`sshfs-pair.sh start printed ${mounts.length} mount points, expected ${n}`);
  }
  const requestLogs = options.requestLog === true ? mounts.map((_, i) => join(dir, `sshfs-mnt${i + 1}.log`)) : [];
  return { mounts, export: join(dir, 'export'), requestLogs, stop };
}
