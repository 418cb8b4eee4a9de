import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import type { ClusterRow } from '../../bench/cluster-report.js';

const CLUSTER = fileURLToPath(new URL('../../bench/cluster.js', import.meta.url));

/**
 * The plumbing of `npm run bench:cluster` (sshd, relay, mounts, counting, cleanup), on a tiny
 * site with N = 1 and 2: asserts what was counted, never how fast.
 */
describe('bench:cluster smoke', { timeout: 240_000 }, () => {
  test('N = 1, 2 over sshfs through the relay: full coverage, counts per node, nothing left mounted', async (t) => {
    const results = await mkdtemp(join(tmpdir(), 'mountcrawl-cluster-test-'));
    t.after(() => rm(results, { recursive: true, force: true }));
    const args = [CLUSTER, '--nodes', '1,2', '--hosts', '4', '--pages', '8', '--latency', '5', '--results', results, '--node-args=--heartbeat 200'];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code === 3) {
      // Missing sshd, sshfs, FUSE or python3: the bench says which. In CI they are installed.
      assert.notEqual(process.env.CI, 'true', `bench:cluster cannot run in CI: ${stderr}`);
      return t.skip(stderr.trim().split('\n').pop());
    }
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^\| N \| run \| wall s \| pages\/s \| speedup/m);
    const files = await readdir(results);
    assert.equal(files.length, 1);
    const { rows } = JSON.parse(await readFile(join(results, files[0]!), 'utf8')) as { rows: ClusterRow[] };
    assert.deepEqual(
      rows.map((r) => r.nodes),
      [1, 2],
    );
    for (const r of rows) {
      assert.equal(r.coverage, 1, `N=${r.nodes}: coverage`);
      assert.equal(r.duplicateFetches, 0, `N=${r.nodes}: duplicates`);
      assert.ok(r.maxInFlightPerHost <= 1, `N=${r.nodes}: per-host limit`);
      assert.equal(r.perNode.length, r.nodes);
      assert.equal(
        r.perNode.reduce((a, n) => a + n.pages, 0),
        4 * 8,
        `N=${r.nodes}: every page written once`,
      );
      for (const n of r.perNode) {
        assert.equal(n.exitCode, 0);
        assert.ok(n.cpuSeconds > 0, `${n.node}: CPU read from its summary`);
        assert.ok(n.mount !== undefined && n.mount.requests > 0 && (n.mount.ops.OPEN ?? 0) > 0, `${n.node}: SFTP requests counted`);
        assert.ok(n.mount.up > 0 && n.mount.down > 0, `${n.node}: relay bytes counted`);
      }
    }
    // The bench unmounted everything it mounted and removed its directory.
    const dir = / under (\S+)$/m.exec(stderr)?.[1];
    assert.ok(dir !== undefined, stderr);
    assert.ok(!(await readFile('/proc/self/mounts', 'utf8')).includes(dir), `a mount under ${dir} is left`);
    await assert.rejects(readdir(dir), { code: 'ENOENT' });
  });
});
