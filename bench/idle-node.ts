/**
 * `node dist/bench/idle-node.js` (issue 9, item 6): what an idle node costs the mount and the
 * machine when it owns many hosts. A site of `--hosts` hosts (2 pages each) on loopback is
 * crawled to the end by one node; then a `crawl --watch` node is started on the finished
 * data directory (nothing to do: it only heartbeats and reseeds) and, once it is idle,
 * traced with `strace -f -c` for `--trace` seconds. Reported: system calls per second by
 * name (statx, openat, getdents64, ...), the node's CPU in that window, and its heartbeats'
 * mean and longest wall time (from its end summary). Needs strace. docs/benchmarks-log.md,
 * "Broad crawl", has the results.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGeneratedSite } from '../src/site/generated-site.js';
import { round, wholeArg } from './measure.js';
import { MOUNTCRAWL_BIN } from './peers.js';
import { benchArgs } from './args.js';

const { values: o } = benchArgs({
  options: {
    hosts: { type: 'string', default: '2000' },
    trace: { type: 'string', default: '20' },
    settle: { type: 'string', default: '8' },
    bin: { type: 'string', default: MOUNTCRAWL_BIN },
  },
});
const log = (line: string): void => void process.stderr.write(`idle-node bench: ${line}\n`);
const hosts = wholeArg('idle-node bench', 'hosts', o.hosts, 1);
const traceS = wholeArg('idle-node bench', 'trace', o.trace, 1);
const settleS = wholeArg('idle-node bench', 'settle', o.settle, 0);
if (spawnSync('strace', ['-V']).status !== 0) {
  console.error('idle-node bench: strace is missing (apt-get install strace)');
  process.exit(2);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** user + system CPU ms of a process of this machine, from /proc (10 ms ticks). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** Runs the CLI to its end (exit 0). */
function runCrawl(args: readonly string[]): Promise<void> {
  const child = spawn(process.execPath, [o.bin!, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`crawl exited ${code}: ${err.slice(-2000)}`)))),
  );
}

/** `strace -c` summary lines: calls per system call name. */
function parseStraceSummary(text: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (m !== null && m[2] !== 'total') calls.set(m[2]!, Number(m[1]));
  }
  return calls;
}

const site = await startGeneratedSite({ hosts, pagesPerHost: 2, linksPerPage: 2, crossLinks: 0, latencyMs: 0 });
const work = await mkdtemp(join(tmpdir(), 'mountcrawl-idle-'));
const data = join(work, 'data');
try {
  const seeds = join(work, 'seeds.txt');
  await writeFile(seeds, `${site.hosts.map((h) => `${h.origin}/`).join('\n')}\n`);
  const common = ['--data', data, '--node-id', 'n1', '--delay', '0', '--no-progress', '--json'];
  let t = performance.now();
  await runCrawl(['crawl', '--seeds-file', seeds, ...common, '--per-host', '1', '--concurrency', '16']);
  log(`crawled ${hosts} hosts in ${round((performance.now() - t) / 1000, 1)} s; starting the idle --watch node`);

  const node = spawn(process.execPath, [o.bin!, 'crawl', ...common, '--watch'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let nodeErr = '';
  node.stderr!.on('data', (d: Buffer) => (nodeErr += d.toString()));
  const exited = new Promise<number | null>((resolve) => node.on('exit', (c) => resolve(c)));
  t = performance.now();
  await sleep(settleS * 1000);
  const traceOut = join(work, 'strace.txt');
  const cpuBefore = cpuMsOf(node.pid!);
  const strace = spawn('strace', ['-f', '-c', '-o', traceOut, '-p', String(node.pid)], { stdio: 'ignore' });
  const straced = new Promise<void>((resolve) => strace.on('exit', () => resolve()));
  await sleep(traceS * 1000);
  strace.kill('SIGINT');
  await straced;
  const cpuMs = cpuMsOf(node.pid!) - cpuBefore;
  node.kill('SIGINT');
  const code = await exited;
  if (code !== 130) throw new Error(`the idle node exited ${code}, not 130 (stopped by SIGINT): ${nodeErr.slice(-2000)}`);
  const calls = parseStraceSummary(readFileSync(traceOut, 'utf8'));
  const summaryLine = nodeErr.split('\n').find((l) => l.includes('"msg":"summary"'));
  const sum = JSON.parse(summaryLine ?? '{}') as { heartbeats?: { beats: number; meanMs: number; maxMs: number } };
  const perS = (name: string): number => round((calls.get(name) ?? 0) / traceS, 1);
  console.log(
    `${hosts} hosts, an idle \`crawl --watch\` node traced for ${traceS} s after ${settleS} s (load average ${round(loadavg()[0]!, 1)}):\n`,
  );
  console.log(
    '| statx/s | newfstatat/s | openat/s | getdents64/s | write/s | rename/s | node CPU ms/s | heartbeats | heartbeat mean ms | longest ms |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  const hb = sum.heartbeats ?? { beats: 0, meanMs: Number.NaN, maxMs: Number.NaN };
  console.log(
    `| ${perS('statx')} | ${perS('newfstatat')} | ${perS('openat')} | ${perS('getdents64')} | ${perS('write')} | ${perS('rename')} | ${round(cpuMs / traceS, 1)} | ${hb.beats} | ${hb.meanMs} | ${hb.maxMs} |`,
  );
} finally {
  await site.close();
  await rm(work, { recursive: true, force: true });
}
