import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { until } from '../../support/until.js';

const RUN = fileURLToPath(new URL('../../../bench/run.js', import.meta.url));

/** Pids of the processes whose command line names `dir`. */
function processesNaming(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(dir)) pids.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

describe('npm run bench, stopped while a crawler runs', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, () => {
  test('SIGTERM: the crawler under measure is stopped, the work directory removed, exit 143', { timeout: 60_000 }, async () => {
    const work = await mkdtemp(join(tmpdir(), 'mountcrawl-bench-signal-'));
    try {
      const args = [RUN, '--hosts', '4', '--pages', '300', '--scenarios', '20', '--only', 'mountcrawl', '--processes', '1'];
      args.push('--work', work, '--results', work, '--no-install', '--timeout', '50');
      const bench = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      bench.stderr.on('data', (d: Buffer) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => bench.on('exit', resolve));
      // The crawler's command line names its data directory in the bench's own work directory
      // (the bench's names only --work).
      const crawlers = (): number[] => processesNaming(`${work}/mountcrawl-bench-`);
      await until(() => crawlers().length > 0, 30_000).catch(() => assert.fail(`no crawler started: ${stderr}`));
      bench.kill('SIGTERM');
      assert.equal(await exited, 143, stderr);
      await until(() => crawlers().length === 0, 5_000).catch(() => assert.fail(`still running: ${crawlers().join(', ')}`));
      assert.deepEqual(
        (await readdir(work)).filter((f) => f.startsWith('mountcrawl-bench-')),
        [],
        'the work directory is gone',
      );
      assert.match(stderr, /SIGTERM: stopping the process under measure/);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});
