/**
 * A big crawl on one mount (docs/benchmarks.md, "Scale"): what a node pays to resume it, to
 * take over its largest host, and the memory of a node that knows ten million URLs.
 *
 *   node dist/bench/scale.js [--pages 1000000] [--hosts 1000] [--links 40] [--new-links 9]
 *     [--largest 0.05] [--data DIR] [--keep] [--only resume,takeover,memory] [--sshfs] [--port-base 30000]
 *
 * The crawl (bench/synthetic-crawl.ts): `--pages` links records over `--hosts` hosts of a
 * loopback site (the first host has `--largest` of them, the others even), each record with
 * `--links` links to pages of the crawl and `--new-links` to pages without a record (distinct:
 * new work), and each host's summary, as the nodes that crawled it would have left them. So a
 * node that resumes knows `--pages` x (1 + `--new-links`) URLs: 10,000,000 by default.
 * `--data DIR` keeps it there (built once: a DIR that holds it is used as it is).
 *
 * - resume: `mountcrawl crawl --data DIR` on the crawl, stopped after 20,000 pages: the time
 *   from its start to its first page request, and to full speed (the first second with 80%
 *   of the best second's requests), with the node's CPU seconds then; the page requests of each
 *   second are logged.
 * - takeover: a node crawls the largest host alone (a copy of its records, linked), is killed
 *   at its first page, and a second node starts: the time from the kill to the second's first
 *   page request to it (a node's start included, about 0.3 s).
 * - memory: a node resumes with `--frontier-cap` above what it knows, so that every new URL
 *   is queued (beyond --frontier-memory, spilled); its peak RSS (VmHWM) once its first reseed
 *   has offered every link, then it is stopped.
 *
 * `--sshfs` builds the crawl (200,000 pages unless `--pages`) in the export of an sshfs pair
 * (test/support/sshfs-pair.ts) and runs the nodes on one of its mounts. The timings of
 * status, export and report (bench/read-speed.ts) run on the same crawl when that file exists.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LoopbackSite } from '../src/site/site-server.js';
import { Layout } from '../src/store/layout.js';
import { type SshfsPair, startSshfsPair } from '../test/support/sshfs-pair.js';
import { benchArgs } from './args.js';
import { round, wholeArg } from './measure.js';
import { MOUNTCRAWL_BIN } from './peers.js';
import { writeSyntheticCrawl } from './synthetic-crawl.js';

const { values: o } = benchArgs({
  options: {
    pages: { type: 'string' },
    hosts: { type: 'string', default: '1000' },
    links: { type: 'string', default: '40' },
    'new-links': { type: 'string', default: '9' },
    largest: { type: 'string', default: '0.05' },
    data: { type: 'string' },
    keep: { type: 'boolean', default: false },
    only: { type: 'string', default: 'resume,takeover,memory' },
    sshfs: { type: 'boolean', default: false },
    'port-base': { type: 'string', default: '30000' },
  },
});
const NAME = 'scale bench';
const log = (line: string): void => void process.stderr.write(`${NAME}: ${line}\n`);
const pages = wholeArg(NAME, 'pages', o.pages ?? (o.sshfs ? '200000' : '1000000'), 1);
const hostCount = wholeArg(NAME, 'hosts', o.hosts, 1);
const links = wholeArg(NAME, 'links', o.links, 0);
const newLinks = wholeArg(NAME, 'new-links', o['new-links'], 0);
const largest = Number(o.largest);
const portBase = wholeArg(NAME, 'port-base', o['port-base'], 1024);
const only = new Set(o.only.split(','));
if (!(largest >= 0 && largest < 1) || [...only].some((m) => !['resume', 'takeover', 'memory'].includes(m))) {
  log('--largest is a share below 1; --only names resume, takeover, memory');
  process.exit(2);
}
/** Pages of the resume run: enough to reach full speed, not the whole crawl. */
const RESUME_PAGES = Math.max(1, Math.min(20_000, Math.floor((pages * newLinks) / 10)));

/** Start times (performance.now) of the page requests (not robots.txt) the site answered, and their hosts. */
const pageTimes: number[] = [];
const pageHosts: number[] = [];
// Fixed ports, so that a crawl kept with --data is found again by its host directories.
const site = await LoopbackSite.start({
  hosts: hostCount,
  firstOctet: 2,
  ports: Array.from({ length: hostCount }, (_, i) => portBase + i),
  handle: (_req, res, host, path) => {
    if (path === '/robots.txt') {
      res.writeHead(404).end();
      return;
    }
    pageTimes.push(performance.now());
    pageHosts.push(host.index);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>page</title><p>no links here</p>');
  },
});
if (site.hosts.some((h, i) => h.port !== portBase + i)) {
  log(`ports ${portBase} and up are taken (--port-base)`);
  await site.close();
  process.exit(2);
}
const mounted = o.sshfs ? await startSshfsPair(2) : undefined;
if (mounted !== undefined && 'skip' in mounted) {
  log(`no sshfs pair: ${mounted.skip}`);
  await site.close();
  process.exit(2);
}
const pair: SshfsPair | undefined = mounted;
const work = await mkdtemp(join(tmpdir(), 'mountcrawl-scale-'));
const local = pair !== undefined ? join(pair.export, 'data') : o.data !== undefined ? resolve(o.data) : join(work, 'data');
/** The path the nodes use: the sshfs mount's view of `local`, or `local`. */
const data = pair !== undefined ? join(pair.mounts[0]!, 'data') : local;
const results: Record<string, unknown> = { pages, hosts: hostCount, links, newLinks, largest, mount: pair ? 'sshfs' : 'local' };
try {
  if (!existsSync(join(local, 'summaries'))) {
    await mkdir(local, { recursive: true });
    // Every host's home page, as the crawl's seeds (a resumed node takes every host).
    seed(
      local,
      site.hosts.map((h) => `${h.origin}/`),
    );
    const built = performance.now();
    await writeSyntheticCrawl({
      layout: new Layout(local),
      hosts: site.hosts,
      records: pages,
      links,
      newLinks,
      largest,
      summaries: true,
      log,
    });
    results.buildS = round((performance.now() - built) / 1000, 1);
  } else log(`using the crawl in ${local}`);
  const readSpeed = await import(new URL('./read-speed.js', import.meta.url).href).catch(() => undefined);
  if (typeof readSpeed?.measureReadSpeed === 'function') results.read = await readSpeed.measureReadSpeed({ data, log });

  if (only.has('resume')) results.resume = await resume();
  if (only.has('takeover')) results.takeover = await takeover();
  if (only.has('memory')) results.memory = await memory();
  process.stdout.write(`${JSON.stringify(results)}\n`);
} finally {
  await site.close();
  await pair?.stop();
  if (!o.keep && o.data === undefined) await rm(local, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
}

/** Makes `dir` a data directory (its marker) with these seeds, as `mountcrawl seed` does. */
function seed(dir: string, urls: readonly string[]): void {
  execFileSync(process.execPath, [MOUNTCRAWL_BIN, 'seed', ...urls, '--data', dir], { stdio: 'ignore' });
}

/** A crawl node on `dir`; `onLine` sees each line of its stderr. */
function startNode(dir: string, args: readonly string[], onLine: (line: string) => void = () => undefined) {
  const child = spawn(process.execPath, [MOUNTCRAWL_BIN, 'crawl', '--data', dir, '--no-progress', '--delay', '0', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let rest = '';
  const last: string[] = [];
  child.stderr.on('data', (d: Buffer) => {
    const lines = (rest + d).split('\n');
    rest = lines.pop()!;
    for (const l of lines) {
      onLine(l);
      last.push(l);
      if (last.length > 5) last.shift();
    }
  });
  const exited = new Promise<number | null>((done) => child.on('exit', done));
  return { child, exited, last };
}

/** Start times of page requests since `from` (of host `hostIndex` only, if given), in order. */
function pageStarts(from: number, hostIndex?: number): number[] {
  const out: number[] = [];
  for (let i = pageTimes.length - 1; i >= 0 && pageTimes[i]! >= from; i--) {
    if (hostIndex === undefined || pageHosts[i] === hostIndex) out.push(pageTimes[i]!);
  }
  return out.reverse();
}

async function resume(): Promise<Record<string, unknown>> {
  log(`resume: a node on the crawl, stopped after ${RESUME_PAGES} pages`);
  const started = performance.now();
  const node = startNode(data, ['--max-pages', String(RESUME_PAGES)]);
  // Its CPU seconds, read until it exits (the last reading is at most half a second short),
  // with the time of each reading, for its CPU seconds at its first request and at full speed.
  let cpuS = 0;
  const cpuAt: [number, number][] = [];
  const poll = setInterval(() => {
    cpuS = Math.max(cpuS, cpuSeconds(node.child.pid!));
    cpuAt.push([performance.now(), cpuS]);
  }, 500);
  const cpuBy = (t: number): number => round(cpuAt.findLast(([at]) => at <= t)?.[1] ?? 0, 1);
  const code = await node.exited;
  clearInterval(poll);
  const wallS = (performance.now() - started) / 1000;
  const starts = pageStarts(started);
  if (starts.length === 0) throw new Error(`the resumed node fetched nothing (exit ${code}): ${node.last.join(' | ')}`);
  const perSecond = new Array<number>(Math.floor((starts.at(-1)! - starts[0]!) / 1000) + 1).fill(0);
  for (const t of starts) perSecond[Math.floor((t - starts[0]!) / 1000)]!++;
  const best = Math.max(...perSecond);
  const fullAt = perSecond.findIndex((n) => n >= 0.8 * best);
  const r = {
    exit: code,
    firstRequestS: round((starts[0]! - started) / 1000, 2),
    fullSpeedS: round((starts[0]! - started) / 1000 + fullAt, 2),
    cpuAtFirstS: cpuBy(starts[0]!),
    cpuAtFullS: cpuBy(starts[0]! + fullAt * 1000),
    bestPagesPerS: best,
    pages: starts.length,
    wallS: round(wallS, 1),
    cpuS: round(cpuS, 1),
  };
  log(`resume: ${JSON.stringify(r)}; page requests a second: ${perSecond.join(' ')}`);
  return r;
}

async function takeover(): Promise<Record<string, unknown>> {
  const host = site.hosts[0]!;
  // The largest host alone, in a crawl of its own: its records linked, its summary copied.
  const dir = pair !== undefined ? join(pair.mounts[0]!, 'takeover') : join(work, 'takeover');
  const localDir = pair !== undefined ? join(pair.export, 'takeover') : dir;
  await mkdir(localDir, { recursive: true });
  seed(localDir, [`${host.origin}/`]);
  await mkdir(join(localDir, 'links'), { recursive: true });
  await mkdir(join(localDir, 'summaries'), { recursive: true });
  execFileSync('cp', ['-al', join(local, 'links', host.hostDir), join(localDir, 'links', host.hostDir)]);
  execFileSync('cp', [join(local, 'summaries', `${host.hostDir}.json`), join(localDir, 'summaries')]);
  const records = Number(execFileSync('sh', ['-c', `ls '${join(localDir, 'links', host.hostDir)}' | wc -l`], { encoding: 'utf8' }));
  log(`takeover: the largest host, ${records} pages; its first node`);
  const t0 = performance.now();
  const first = startNode(dir, [`${host.origin}/`, '--node-id', 'first-holder']);
  while (pageStarts(t0, 0).length === 0) {
    if (first.child.exitCode !== null) throw new Error(`the first node exited ${first.child.exitCode}: ${first.last.join(' | ')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const firstStartS = (pageStarts(t0, 0)[0]! - t0) / 1000;
  first.child.kill('SIGKILL');
  await first.exited;
  const killedAt = performance.now();
  const second = startNode(dir, ['--node-id', 'taker', '--max-pages', '200']);
  while (pageStarts(killedAt, 0).length === 0) {
    if (second.child.exitCode !== null) throw new Error(`the second node exited ${second.child.exitCode} before a request`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const takeoverS = (pageStarts(killedAt, 0)[0]! - killedAt) / 1000;
  second.child.kill('SIGTERM');
  await second.exited;
  const r = { records, firstNodeS: round(firstStartS, 2), takeoverS: round(takeoverS, 2) };
  log(`takeover: ${JSON.stringify(r)}`);
  await rm(localDir, { recursive: true, force: true });
  return r;
}

async function memory(): Promise<Record<string, unknown>> {
  const known = pages * (1 + newLinks);
  log(`memory: a node that knows ${known} URLs (${pages} done, ${pages * newLinks} queued)`);
  const started = performance.now();
  // A slow crawl (--delay 10 s a host), so that its queue is still whole when its reseed ends:
  // when its record says it crawls and its queue has not grown for 5 s.
  const node = startNode(data, ['--frontier-cap', String(2 * known), '--delay', '10000']);
  let peakKiB = 0;
  let queued = -1;
  let still = 0;
  while (node.child.exitCode === null && still < 5) {
    await new Promise((r) => setTimeout(r, 1000));
    peakKiB = Math.max(peakKiB, vmHwmKiB(node.child.pid!));
    const rec = nodeRecord(data);
    still = rec.state === 'crawling' && rec.queued > 0 && rec.queued <= queued ? still + 1 : 0;
    queued = Math.max(queued, rec.queued);
  }
  const reseedS = (performance.now() - started) / 1000 - 5;
  const cpuS = cpuSeconds(node.child.pid!);
  node.child.kill('SIGTERM');
  const code = await node.exited;
  const r = { known, exit: code, reseedS: round(reseedS, 1), cpuS: round(cpuS, 1), queued, peakRssMiB: round(peakKiB / 1024, 0) };
  log(`memory: ${JSON.stringify(r)}`);
  return r;
}

/** The process's peak RSS so far (VmHWM), KiB; 0 once it is gone. */
function vmHwmKiB(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The process's CPU seconds so far (user and system, from /proc); 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    // Fields 14 and 15 (utime, stime), in clock ticks of 1/100 s; the name (field 2) may hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The state and queue of the one node's heartbeat record. */
function nodeRecord(dir: string): { state: string; queued: number } {
  try {
    const text = execFileSync('sh', ['-c', `cat '${join(dir, 'nodes')}'/*.json`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return { state: /"state":\s*"(\w+)"/.exec(text)?.[1] ?? '', queued: Number(/"queued":\s*(\d+)/.exec(text)?.[1] ?? -1) };
  } catch {
    return { state: '', queued: -1 };
  }
}
