/**
 * `npm run bench` (issue 5): starts the deterministic multi-host site on loopback, runs the
 * fetch-only baseline, mountcrawl, wget and Scrapy against it one after another, once per
 * latency scenario, and writes bench/results/<date>-<scenario>.json plus a table on stdout.
 *
 *   node dist/bench/run.js [--hosts 20] [--pages 500] [--scenarios 0,20]
 *     [--only baseline,mountcrawl,wget,scrapy] [--processes auto] [--per-host 8] [--concurrency 32]
 *     [--results bench/results] [--work DIR] [--timeout 1800] [--no-install] [--python PATH] [--keep]
 *     [--profile DIR] [--shape mixed|standard|small|many-links|scripts|large|near-max]
 *
 * --profile DIR runs mountcrawl's processes with `node --cpu-prof` (the supervisor's children
 * inherit its execArgv), writes the profiles into DIR/<scenario>/ and prints
 * where the time went (self time by function and by module).
 * docs/benchmarks.md explains every column.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, hostname, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseProcesses } from '../src/config/processes.js';
import { formatProfile, summarizeProfiles } from './cpu-profile.js';
import { measure, round, stopMeasured, tail, wholeArg } from './measure.js';
import { PEERS, REPO, peerCommand, type PeerName, type PeerSettings } from './peers.js';
import { checkTargets, formatPeaks, formatTable, type PeerResult, type ScenarioResult } from './report.js';
import { PAGE_SHAPES, type PageShape } from './pages.js';
import { BenchSite } from './site.js';
import { TOOLS, ensureTools, type Found, type Tool } from './tools.js';
import { benchArgs } from './args.js';

const { values: o } = benchArgs({
  options: {
    hosts: { type: 'string', default: '20' },
    pages: { type: 'string', default: '500' },
    scenarios: { type: 'string', default: '0,20' },
    only: { type: 'string', default: PEERS.join(',') },
    processes: { type: 'string', default: 'auto' },
    'per-host': { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '32' },
    results: { type: 'string', default: join(REPO, 'bench', 'results') },
    work: { type: 'string', default: tmpdir() },
    timeout: { type: 'string', default: '1800' },
    'no-install': { type: 'boolean', default: false },
    python: { type: 'string' },
    keep: { type: 'boolean', default: false },
    profile: { type: 'string' },
    shape: { type: 'string', default: 'mixed' },
  },
});

const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);

const whole = (name: string, v: string, min: number): number => wholeArg('bench', name, v, min);

const hosts = whole('hosts', o.hosts!, 1);
const pagesPerHost = whole('pages', o.pages!, 1);
const scenarios = o.scenarios!.split(',').map((s) => whole('scenarios', s.trim(), 0));
const only = o.only!.split(',').map((s) => s.trim()) as PeerName[];
for (const p of only) {
  if (!PEERS.includes(p)) {
    log(`--only: unknown peer ${JSON.stringify(p)} (peers: ${PEERS.join(', ')})`);
    process.exit(2);
  }
}
const pageShape = o.shape as PageShape | 'mixed';
if (pageShape !== 'mixed' && !(PAGE_SHAPES as readonly string[]).includes(pageShape)) {
  log(`--shape: unknown page shape ${JSON.stringify(o.shape)} (mixed, ${PAGE_SHAPES.join(', ')})`);
  process.exit(2);
}
const peers = PEERS.filter((p) => only.includes(p));
const timeoutMs = whole('timeout', o.timeout!, 1) * 1000;
// `auto` as mountcrawl resolves it (src/config/processes.ts): what a user would pick here.
let processes: number;
try {
  processes = parseProcesses(o.processes!);
} catch (err) {
  log(`--processes: ${(err as Error).message}`);
  process.exit(2);
}
const perHost = whole('per-host', o['per-host']!, 1);
const concurrency = whole('concurrency', o.concurrency!, 1);

// What the peers need from the system: installed when missing (unless --no-install), else skipped.
const needed: Tool[] = [TOOLS.time];
if (peers.includes('wget')) needed.push(TOOLS.wget);
if (peers.includes('scrapy')) needed.push(TOOLS.scrapy);
const found = await ensureTools(needed, { install: !o['no-install'], ...(o.python ? { python: o.python } : {}), log });
const scrapy = found.get('scrapy');
const unavailable = (name: PeerName): string | undefined => {
  if (name === 'mountcrawl' && !existsSync(join(REPO, 'dist', 'src', 'cli', 'main.js'))) return 'not built (npm run build)';
  const f: Found | undefined = name === 'wget' ? found.get('wget') : name === 'scrapy' ? scrapy : undefined;
  return f !== undefined && !f.ok ? `missing (${name === 'scrapy' ? TOOLS.scrapy.debianPackage : name}: ${f.why})` : undefined;
};
const versionOf = (name: PeerName): string => {
  const f = name === 'wget' ? found.get('wget') : name === 'scrapy' ? scrapy : undefined;
  if (f?.ok) return f.version;
  return name === 'mountcrawl' ? `mountcrawl ${commit()}` : `node ${process.version}, undici`;
};
const python = scrapy?.ok ? scrapy.python : o.python;
const settings: PeerSettings = { processes, perHost, concurrency, ...(python !== undefined ? { python } : {}) };

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', 'src'], { cwd: REPO, encoding: 'utf8' }).trim();
    return dirty === '' ? head : `${head}+src-changes`;
  } catch {
    return 'unknown';
  }
}

await mkdir(resolve(o.work!), { recursive: true });
const workRoot = await mkdtemp(join(resolve(o.work!), 'mountcrawl-bench-'));
await mkdir(o.results!, { recursive: true });
log(`generating ${hosts} x ${pagesPerHost} pages (${pageShape})`);
const site = await BenchSite.start({ hosts, pagesPerHost, pages: pageShape });
log(
  `site ready in ${site.stats.generateSeconds} s: ${site.hosts[0]!.address}..${site.hosts[hosts - 1]!.address}, ` +
    `${(site.stats.avgBytes / 1024).toFixed(1)} KiB, ${site.stats.avgElements} elements, ${site.stats.avgAnchors} links per page`,
);
// Stopped (Ctrl-C, kill): the crawler being measured and its work directory go with the bench.
for (const [signal, number] of [
  ['SIGINT', 2],
  ['SIGTERM', 15],
] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the process under measure${o.keep ? '' : ` and removing ${workRoot}`}`);
    stopMeasured();
    if (!o.keep) rmSync(workRoot, { recursive: true, force: true, maxRetries: 5 });
    process.exit(128 + number);
  });
}
const stamp = new Date().toISOString().replace(/[:]/g, '').replace(/\..*$/, 'Z');
const mountcrawlCommit = commit();
let failed = false;

try {
  for (const latencyMs of scenarios) {
    site.latencyMs = latencyMs;
    const name = `${latencyMs}ms`;
    const results: PeerResult[] = [];
    for (const p of peers) {
      const skip = unavailable(p);
      if (skip !== undefined) {
        log(`${name}: ${p} skipped: ${skip}`);
        results.push({ name: p, skipped: skip });
        continue;
      }
      results.push(await runPeer(p, name));
    }
    const result: ScenarioResult = {
      version: 1,
      date: new Date().toISOString(),
      scenario: { name, latencyMs },
      site: {
        hosts,
        pagesPerHost,
        pages: hosts * pagesPerHost,
        pageShape,
        avgPageBytes: site.stats.avgBytes,
        avgElements: site.stats.avgElements,
        avgLinks: site.stats.avgAnchors,
        // Also a rough gauge of the machine's speed at the time (the same work every run).
        generateSeconds: site.stats.generateSeconds,
      },
      machine: {
        hostname: hostname(),
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? 'unknown',
        memoryGiB: Math.round(totalmem() / 2 ** 30),
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
      },
      mountcrawl: { commit: mountcrawlCommit, processes: settings.processes, perHost: settings.perHost, concurrency: settings.concurrency },
      peers: results,
      targets: checkTargets(latencyMs, results, settings.perHost, hosts * pagesPerHost),
    };
    const file = join(o.results!, `${stamp}-${name}.json`);
    await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${formatTable(result)}\n\n(${file})\n\n`);
  }
} finally {
  await site.close();
  if (!o.keep) await rm(workRoot, { recursive: true, force: true });
  else log(`kept ${workRoot}`);
}
process.exitCode = failed ? 1 : 0;

/** Runs one peer against the site and turns what it did into its row. */
async function runPeer(p: PeerName, scenario: string): Promise<PeerResult> {
  const work = join(workRoot, `${scenario}-${p}`);
  await mkdir(work, { recursive: true });
  const cmd = await peerCommand(p, site, settings, work);
  // Pages the previous peer wrote are flushed now, not while this one runs.
  try {
    execFileSync('sync');
  } catch {
    // no sync(1): the flush may then overlap this run a little
  }
  site.reset();
  log(`${scenario}: running ${p}`);
  const profileDir = o.profile !== undefined && p === 'mountcrawl' ? resolve(o.profile, scenario) : undefined;
  let args = cmd.args;
  if (profileDir !== undefined) {
    // NODE_OPTIONS may not carry --cpu-prof; the supervisor's fork() passes its own execArgv on.
    // Profiles of an earlier run in the same directory would be summed with this one's.
    await rm(profileDir, { recursive: true, force: true });
    await mkdir(profileDir, { recursive: true });
    args = ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, ...args];
  }
  const cpuBefore = process.cpuUsage();
  const m = await measure(cmd.command, args, {
    ...(cmd.cwd ? { cwd: cmd.cwd } : {}),
    ...(cmd.env ? { env: cmd.env } : {}),
    logPrefix: join(work, p),
    timeoutMs,
    role: cmd.role,
  });
  const cpu = process.cpuUsage(cpuBefore);
  const c = site.counts();
  const ok = m.exitCode === 0 && !m.timedOut;
  // wget exits 8 when some request got an HTTP error: the disallowed and 404 links do that.
  const wgetOk = p === 'wget' && m.exitCode === 8 && !m.timedOut;
  const pages = c.pagesFetched;
  const row: PeerResult = {
    name: p,
    version: versionOf(p),
    command: [cmd.command, ...cmd.args],
    concurrency: cmd.concurrency,
    exitCode: wgetOk ? 0 : m.exitCode,
    timedOut: m.timedOut,
    wallSeconds: m.wallSeconds,
    activeSeconds: round(c.activeSeconds, 2),
    ...(c.firstRequestAt !== undefined && c.lastResponseAt !== undefined
      ? {
          startupSeconds: round((c.firstRequestAt - m.startedAt) / 1000, 2),
          tailSeconds: round((m.startedAt + m.wallSeconds * 1000 - c.lastResponseAt) / 1000, 2),
        }
      : {}),
    pages,
    coverage: round(pages / c.pages, 4),
    pagesPerSecond: round(pages / m.wallSeconds, 1),
    activePagesPerSecond: c.activeSeconds > 0 ? round(pages / c.activeSeconds, 1) : 0,
    cpuSeconds: m.cpuSeconds,
    cpuSource: m.cpuSource,
    cpuSecondsPerPage: pages > 0 ? round(m.cpuSeconds / pages, 6) : 0,
    siteCpuSeconds: round((cpu.user + cpu.system) / 1e6, 2),
    otherCpuSeconds: round(Math.max(0, m.machineCpuSeconds - m.cpuSeconds - (cpu.user + cpu.system) / 1e6), 2),
    processes: m.processes,
    maxRssMb: m.maxRssMb,
    requests: c.requests,
    duplicateFetches: c.duplicateRequests,
    duplicateExamples: c.duplicateExamples,
    robotsTxtFetches: c.robotsRequests,
    disallowedFetches: c.disallowedRequests,
    externalFetches: c.externalRequests + c.externalConnections,
    otherRequests: c.otherRequests,
    maxInFlightPerHost: c.maxInFlightPerHost,
    ...(ok || wgetOk ? {} : { errorTail: tail(m.stderrFile) }),
  };
  if (!ok && !wgetOk) {
    failed = true;
    log(`${scenario}: ${p} failed (exit ${m.exitCode}${m.timedOut ? ', timed out' : ''}):\n${row.errorTail}`);
  }
  if (row.otherCpuSeconds! > Math.max(0.5, 0.1 * m.wallSeconds)) {
    log(`${scenario}: ${p}: other processes used ${row.otherCpuSeconds} CPU s during this run: its numbers are noisy`);
  }
  log(
    `${scenario}: ${p}: ${pages}/${c.pages} pages in ${m.wallSeconds} s (${row.pagesPerSecond} pages/s), ` +
      `CPU ${m.cpuSeconds} s, peak RSS ${formatPeaks(m.processes)} MiB`,
  );
  // A peer's files stay until the bench ends (the work directory goes then): removing tens of
  // thousands of files just before the next peer runs made that peer's file creation slower
  // on some disks (an ext4 without a journal skips recently freed inodes one by one:
  // docs/benchmarks-log.md, "What a new file costs on this machine's disk"), and it is the same for every peer now.
  if (profileDir !== undefined)
    process.stdout.write(
      `CPU profile of mountcrawl, ${scenario} (${profileDir}):\n${formatProfile(await summarizeProfiles(profileDir))}\n\n`,
    );
  return row;
}
