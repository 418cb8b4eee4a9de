import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test, type TestContext } from 'node:test';
import type { ClusterRow } from '../../../bench/cluster-report.js';
import type { IdealCluster } from '../../../bench/ideal-cluster.js';

const CLUSTER = fileURLToPath(new URL('../../../bench/cluster.js', import.meta.url));

/**
 * The plumbing of `npm run bench:cluster` (sshd, relay, mounts, counting, cleanup), on a tiny
 * site with N = 1 and 2: asserts what was counted, never how fast.
 */
/** Runs the bench with `args` (and a results directory of its own); skips the test when it cannot run here (never in CI). */
async function runBench(
  t: TestContext,
  args: readonly string[],
): Promise<{ rows: ClusterRow[]; ideal: Record<string, IdealCluster>; stdout: string; stderr: string } | undefined> {
  const results = await mkdtemp(join(tmpdir(), 'mountcrawl-cluster-test-'));
  t.after(() => rm(results, { recursive: true, force: true }));
  const child = spawn(process.execPath, [CLUSTER, ...args, '--results', results], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code === 3) {
    // Missing sshd, sshfs, FUSE or python3: the bench says which. In CI they are installed.
    assert.notEqual(process.env.CI, 'true', `bench:cluster cannot run in CI: ${stderr}`);
    t.skip(stderr.trim().split('\n').pop());
    return undefined;
  }
  assert.equal(code, 0, stderr);
  const files = await readdir(results);
  assert.equal(files.length, 1);
  const { rows, ideal } = JSON.parse(await readFile(join(results, files[0]!), 'utf8')) as {
    rows: ClusterRow[];
    ideal: Record<string, IdealCluster>;
  };
  return { rows, ideal, stdout, stderr };
}

describe('bench:cluster smoke', { timeout: 240_000 }, () => {
  test('N = 1, 2 over sshfs through the relay: full coverage, counts per node, nothing left mounted', async (t) => {
    const args = ['--nodes', '1,2', '--runs', '1', '--hosts', '4', '--pages', '8', '--latency', '5', '--node-args=--heartbeat 200'];
    const run = await runBench(t, args);
    if (run === undefined) return;
    const { rows, ideal, stdout, stderr } = run;
    assert.match(stdout, /^\| N \| runs \| wall s, median \(min to max\) \| speedup \| efficiency \| ideal s \(lower bound s\)/m);
    assert.match(stdout, /^\| N \| run \| wall s \| pages\/s \| speedup/m);
    assert.match(stdout, /against a heartbeat of 200 ms/);
    assert.match(stdout, /^\| N \| run \| per page the node wrote, each node \|/m);
    for (const n of ['1', '2']) {
      const i = ideal[n]!;
      assert.ok(i.greedySeconds >= i.lowerBoundSeconds && i.lowerBoundSeconds > 0, `N=${n}: ideal ${JSON.stringify(i)}`);
      assert.equal(i.requests, 4 * 9, `N=${n}: a robots.txt and 8 pages per host`);
    }
    assert.match(
      stdout,
      /^\| N \| run \| first request s \| last request s \| wall s \| pages per node \| exits, s \| partition bound \|$/m,
    );
    assert.deepEqual(
      rows.map((r) => r.nodes),
      [1, 2],
    );
    for (const r of rows) {
      assert.equal(r.coverage, 1, `N=${r.nodes}: coverage`);
      assert.equal(r.duplicateFetches, 0, `N=${r.nodes}: duplicates`);
      assert.ok(r.maxInFlightPerHost <= 1, `N=${r.nodes}: per-host limit`);
      assert.equal(r.perNode.length, r.nodes);
      assert.ok(
        r.firstRequestSeconds > 0 && r.firstRequestSeconds <= r.lastRequestSeconds && r.lastRequestSeconds <= r.wallSeconds,
        `N=${r.nodes}: request times ${r.firstRequestSeconds}, ${r.lastRequestSeconds} within ${r.wallSeconds} s`,
      );
      assert.equal(
        r.perNode.reduce((a, n) => a + n.pages, 0),
        4 * 8,
        `N=${r.nodes}: every page written once`,
      );
      // Every page but the 4 seeds was found on a page some node wrote first: by the node that fetched it, or by another.
      const d = r.discovery;
      assert.equal(d.crossNode.count + d.sameNode.count, 4 * 7, `N=${r.nodes}: ${JSON.stringify(d)}`);
      assert.equal(d.crossNodeIdle.count, d.crossNode.count);
      if (r.nodes === 1) assert.equal(d.crossNode.count, 0);
      if (d.crossNode.count > 0) assert.ok(d.crossNode.medianMs <= d.crossNode.p95Ms && d.crossNode.p95Ms <= d.crossNode.maxMs);
      const c = r.machineCpu;
      assert.ok(c.seconds > 0 && c.meanCores > 0 && c.peakCores >= c.meanCores && c.cores > 0, `N=${r.nodes}: ${JSON.stringify(c)}`);
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

  test("n1's link cut for longer than --dead-after: n2 takes its hosts over, n1 fences itself and rejoins; nothing lost, duplicates only what n1 had fetched", async (t) => {
    // n1 holds about half of 12 hosts of 60 pages (100 ms each, --per-host 1): still crawling at the cut.
    const args = [
      '--nodes',
      '2',
      '--runs',
      '1',
      '--hosts',
      '12',
      '--pages',
      '60',
      '--latency',
      '100',
      '--fault',
      'cut',
      '--fault-at',
      '3',
      '--fault-for',
      '6',
    ];
    const run = await runBench(t, [...args, '--node-args=--heartbeat 200 --dead-after 2000']);
    if (run === undefined) return;
    const [r] = run.rows;
    assert.ok(r !== undefined && r.fault !== undefined, run.stderr);
    const [n1, n2] = r.perNode;
    assert.deepEqual(
      r.perNode.map((n) => n.exitCode),
      [0, 0],
    );
    assert.equal(r.coverage, 1, 'every page fetched');
    // Every page is on the mount (the data, not what the nodes believe: a write whose reply the
    // cut lost is counted by no node, though it landed and its page is not fetched again).
    assert.equal(r.fault.linksRecords, 12 * 60, 'every page written');
    const counted = r.perNode.reduce((a, n) => a + n.pages, 0);
    assert.ok(
      counted <= 12 * 60 && counted >= 12 * 60 - n1!.leftToNewOwner,
      `${counted} pages counted by the nodes, n1 left ${n1!.leftToNewOwner}`,
    );
    assert.ok(r.fault.n1Hosts > 0, 'n1 held hosts at the cut');
    assert.ok((n2!.events.tookOver ?? 0) > 0, `n2 took no host over: ${JSON.stringify(n2!.events)}`);
    assert.ok((n1!.events.lostLease ?? 0) > 0, `n1 found no lease lost: ${JSON.stringify(n1!.events)}`);
    assert.ok((n1!.events.fencedBack ?? 0) > 0, `n1 was not fenced, or did not come back: ${JSON.stringify(n1!.events)}`);
    // What n1 fetched and could not write is bounded by its requests in flight (--concurrency 4).
    assert.ok(n1!.leftToNewOwner <= 4, `n1 left ${n1!.leftToNewOwner} fetched pages`);
    // A duplicate is a page n1 fetched and left, or a robots.txt of one of its hosts.
    assert.ok(
      r.duplicateFetches <= n1!.leftToNewOwner + r.fault.n1Hosts,
      `${r.duplicateFetches} duplicates, n1 left ${n1!.leftToNewOwner}`,
    );
    assert.equal(r.fault.tempFilesLeft, 0);
  });
});

describe('bench scripts: bad options', () => {
  test('an unknown option or a missing value: one line on stderr, exit 2, no stack trace', async () => {
    for (const args of [['--no-such-option'], ['--nodes']]) {
      const child = spawn(process.execPath, [CLUSTER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      assert.equal(code, 2, stderr);
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, stderr);
      assert.match(lines[0]!, /^cluster\.js: .*--(no-such-option|nodes)/);
    }
  });
});
