/**
 * `npm run bench:read`: how fast the tools read a big crawl. Builds a finished crawl of
 * --pages links records over --hosts hosts (bench/synthetic-crawl.ts, with each host's summary
 * as its lease holder writes it), then times, each in a child process under GNU time (wall,
 * CPU, peak RSS): `status`, `export | wc -l`, `export --fields key,url,depth | wc -l` and
 * `report`.
 *
 *   node dist/bench/read-speed.js [--pages 200000] [--hosts 100] [--links 40] [--data DIR] [--keep]
 *     [--no-summaries] [--sshfs]
 *
 * --data DIR builds there (default: a new directory under /dev/shm, else the temp dir), or
 * reuses the crawl found there. --sshfs copies the crawl into the export of an sshfs pair
 * (test/support/sshfs-pair.ts) and runs the commands on one of its mounts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDataDir } from '../src/store/data-dir.js';
import { NORMALIZATION_VERSION } from '../src/url/normalize.js';
import { startSshfsPair } from '../test/support/sshfs-pair.js';
import { benchArgs } from './args.js';
import { haveGnuTime, round, wholeArg } from './measure.js';
import { MOUNTCRAWL_BIN } from './peers.js';
import { namedHosts, writeSyntheticCrawl } from './synthetic-crawl.js';

/** One command's run: wall and CPU seconds, peak RSS, and the lines it printed on stdout. */
export interface TimedRun {
  readonly wallS: number;
  readonly cpuS: number;
  readonly peakRssMiB: number;
  readonly lines: number;
}

/** What readSpeed measured on one data directory. */
export interface ReadSpeed {
  readonly status: TimedRun;
  readonly export: TimedRun & { readonly recordsPerS: number };
  readonly exportFields: TimedRun & { readonly recordsPerS: number };
  readonly report: TimedRun;
}

/** The directory a bench builds in when none is given: /dev/shm when there is one (memory, as a page-cached disk), else the temp dir. */
export async function scratchDir(prefix: string): Promise<string> {
  return mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), prefix));
}

/** Builds a finished crawl in `dir` that the tools accept as a data directory; returns the seconds it took. */
export async function buildReadCrawl(
  dir: string,
  options: { pages: number; hosts: number; links: number; summaries: boolean; log?: (line: string) => void },
): Promise<number> {
  const { layout } = await openDataDir(dir, 'bench', { version: NORMALIZATION_VERSION, sessionParams: [] });
  const started = performance.now();
  await writeSyntheticCrawl({
    layout,
    records: options.pages,
    hosts: namedHosts(options.hosts),
    links: options.links,
    summaries: options.summaries,
    ...(options.log !== undefined ? { log: options.log } : {}),
  });
  return (performance.now() - started) / 1000;
}

/** Runs `mountcrawl ARGS` under GNU time, its stdout counted by lines (as `| wc -l`) and dropped. */
export async function timeMountcrawl(args: readonly string[]): Promise<TimedRun> {
  const timeFile = join(tmpdir(), `mountcrawl-read-speed-${process.pid}.time`);
  const child = spawn('/usr/bin/time', ['-f', '%e %U %S %M', '-o', timeFile, process.execPath, MOUNTCRAWL_BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let lines = 0;
  child.stdout.on('data', (d: Buffer) => {
    for (let i = d.indexOf(10); i !== -1; i = d.indexOf(10, i + 1)) lines++;
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  if (code !== 0) throw new Error(`mountcrawl ${args.join(' ')} exited ${code}: ${stderr.slice(-500)}`);
  const [wall, user, sys, maxKiB] = (await readFile(timeFile, 'utf8')).trim().split(/\s+/).map(Number);
  await rm(timeFile, { force: true });
  return { wallS: wall!, cpuS: round(user! + sys!, 2), peakRssMiB: Math.round(maxKiB! / 1024), lines };
}

/** Times status, export, export --fields key,url,depth and report on the data directory `dir`. */
export async function readSpeed(dir: string): Promise<ReadSpeed> {
  const status = await timeMountcrawl(['status', '--data', dir]);
  const all = await timeMountcrawl(['export', '--data', dir]);
  const fields = await timeMountcrawl(['export', '--data', dir, '--fields', 'key,url,depth']);
  const report = await timeMountcrawl([
    'report',
    '--data',
    dir,
    '--json',
    '--out',
    join(tmpdir(), `mountcrawl-read-speed-${process.pid}.json`),
  ]);
  await rm(join(tmpdir(), `mountcrawl-read-speed-${process.pid}.json`), { force: true });
  const rate = (r: TimedRun): number => Math.round(r.lines / Math.max(r.wallS, 0.01));
  return { status, export: { ...all, recordsPerS: rate(all) }, exportFields: { ...fields, recordsPerS: rate(fields) }, report };
}

async function main(): Promise<void> {
  const { values: o } = benchArgs({
    options: {
      pages: { type: 'string', default: '200000' },
      hosts: { type: 'string', default: '100' },
      links: { type: 'string', default: '40' },
      data: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'no-summaries': { type: 'boolean', default: false },
      sshfs: { type: 'boolean', default: false },
    },
  });
  const log = (line: string): void => void process.stderr.write(`read-speed bench: ${line}\n`);
  if (!haveGnuTime()) {
    log('needs GNU time (/usr/bin/time) to measure the peak RSS');
    process.exit(2);
  }
  const pages = wholeArg('read-speed bench', 'pages', o.pages, 1);
  const hosts = wholeArg('read-speed bench', 'hosts', o.hosts, 1);
  const links = wholeArg('read-speed bench', 'links', o.links, 0);
  const dir = o.data !== undefined ? resolve(o.data) : await scratchDir('mountcrawl-read-speed-');
  const pair = o.sshfs ? await startSshfsPair(2) : undefined;
  if (pair !== undefined && 'skip' in pair) {
    log(`no sshfs pair: ${pair.skip}`);
    process.exit(2);
  }
  try {
    if (!existsSync(join(dir, 'links'))) {
      const s = await buildReadCrawl(dir, { pages, hosts, links, summaries: !o['no-summaries'], log });
      log(`${pages} records over ${hosts} hosts written to ${dir} in ${s.toFixed(1)} s`);
    }
    let readDir = dir;
    if (pair !== undefined) {
      execFileSync('cp', ['-a', dir, join(pair.export, 'data')]);
      readDir = join(pair.mounts[0]!, 'data');
    }
    const r = await readSpeed(readDir);
    for (const [what, run] of Object.entries(r)) log(`${what}: ${JSON.stringify(run)}`);
    process.stdout.write(`${JSON.stringify({ pages, hosts, links, mount: pair === undefined ? 'local' : 'sshfs', ...r })}\n`);
  } finally {
    await pair?.stop();
    if (!o.keep && o.data === undefined) await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
