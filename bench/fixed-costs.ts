/**
 * `npm run bench:fixed` (issue 13, item 3): the fixed costs of a crawl, measured from outside.
 * A small site on loopback (this process) logs when each request arrives and when each
 * response is finished; the crawl runs as a user runs it (`node bin/mountcrawl.js crawl ...`,
 * a fresh data directory each time). Per run:
 *
 * - start: from the spawn of the process to the first request the site sees;
 * - end: from the last response the site finished to the exit of the process (of the
 *   supervisor, with `--processes N`).
 *
 * Runs alternate between the variants (`--processes 1,2`), several of each, and the medians
 * are reported with the load average (the machine is shared: medians, not means).
 * docs/benchmarks.md has the results.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatedSite } from '../src/site/generated-site.js';
import { LoopbackSite } from '../src/site/site-server.js';
import { round, wholeArg } from './measure.js';
import { MOUNTCRAWL_BIN } from './peers.js';
import { benchArgs } from './args.js';

const { values: o } = benchArgs({
  options: {
    hosts: { type: 'string', default: '4' },
    pages: { type: 'string', default: '25' },
    latency: { type: 'string', default: '20' },
    runs: { type: 'string', default: '7' },
    processes: { type: 'string', default: '1,2' },
    bin: { type: 'string', default: MOUNTCRAWL_BIN },
    'node-args': { type: 'string', default: '' },
  },
});
const log = (line: string): void => void process.stderr.write(`fixed-costs bench: ${line}\n`);
const num = (name: keyof typeof o): number => wholeArg('fixed-costs bench', name, o[name] as string, 1);
const variants = o.processes!.split(',').map((s) => wholeArg('fixed-costs bench', 'processes', s, 1));
const runs = num('runs');

/** When each response was finished (performance.now()), the last one kept. */
let lastResponseAt = 0;
/** The crawl's process, and its CPU ms when the first request arrived (the machine is shared: CPU, not only wall time). */
let crawlPid: number | undefined;
let cpuAtFirstRequest: number | undefined;

/** user + system CPU ms of a process of this machine, from /proc (10 ms ticks). */
function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return undefined;
  }
}
let site: LoopbackSite | undefined;
const handle = generatedSite({ hosts: num('hosts'), pagesPerHost: num('pages'), linksPerPage: 6, crossLinks: 2 }, () => site!.hosts);
site = await LoopbackSite.start({
  hosts: num('hosts'),
  latencyMs: wholeArg('fixed-costs bench', 'latency', o.latency!, 0),
  handle: async (req, res, host, path) => {
    if (cpuAtFirstRequest === undefined && crawlPid !== undefined) cpuAtFirstRequest = cpuMsOf(crawlPid);
    res.on('finish', () => (lastResponseAt = Math.max(lastResponseAt, performance.now())));
    await handle(req, res, host, path);
  },
});

interface Run {
  readonly processes: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly wallMs: number;
  readonly pages: number;
  /** CPU ms of the crawl's (first) process before its first request. */
  readonly startCpuMs: number;
}

async function once(processes: number): Promise<Run> {
  const s = site!;
  s.reset();
  lastResponseAt = 0;
  cpuAtFirstRequest = undefined;
  const data = await mkdtemp(join(tmpdir(), 'mountcrawl-fixed-'));
  const extra = o['node-args']!.split(' ').filter((a) => a !== '');
  const args = [o.bin!, 'crawl', `${s.hosts[0]!.origin}/`, '--data', data, '--scope', 'any', '--delay', '0', '--no-progress', ...extra];
  if (processes > 1) args.push('--processes', String(processes));
  const startedAt = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  crawlPid = child.pid;
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  const exitedAt = performance.now();
  await rm(data, { recursive: true, force: true });
  if (code !== 0) throw new Error(`crawl exited ${code}:\n${stderr}`);
  const firstRequestAt = Math.min(...[...s.times.values()].map((t) => t[0]!));
  crawlPid = undefined;
  return {
    processes,
    startMs: firstRequestAt - startedAt,
    endMs: exitedAt - lastResponseAt,
    wallMs: exitedAt - startedAt,
    pages: s.counts.size,
    startCpuMs: cpuAtFirstRequest ?? Number.NaN,
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

try {
  const all: Run[] = [];
  const loads: number[] = [];
  for (let r = 0; r < runs; r++) {
    for (const p of variants) {
      const run = await once(p);
      all.push(run);
      loads.push(loadavg()[0]!);
      log(
        `--processes ${p}, run ${r + 1}: start ${round(run.startMs, 0)} ms (${run.startCpuMs} ms CPU), end ${round(run.endMs, 0)} ms, wall ${round(run.wallMs, 0)} ms, ${run.pages} URLs`,
      );
    }
  }
  console.log(`Medians of ${runs} runs each, load average (1 min) ${round(Math.min(...loads), 1)} to ${round(Math.max(...loads), 1)}.\n`);
  console.log(
    '| processes | start -> first request, ms | CPU of the (first) process before it, ms | last response -> exit, ms | wall, ms | URLs |',
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const p of variants) {
    const rs = all.filter((r) => r.processes === p);
    const col = (f: (r: Run) => number): string =>
      `${round(median(rs.map(f)), 0)} (${round(Math.min(...rs.map(f)), 0)} to ${round(Math.max(...rs.map(f)), 0)})`;
    console.log(
      `| ${p} | ${col((r) => r.startMs)} | ${col((r) => r.startCpuMs)} | ${col((r) => r.endMs)} | ${col((r) => r.wallMs)} | ${rs[0]!.pages} |`,
    );
  }
} finally {
  await site.close();
}
