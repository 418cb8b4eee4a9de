/**
 * `npm run bench:cluster`: does adding machines add speed? N nodes (default 1, 2, 4 and 8),
 * each on its own sshfs mount of one export served by one private sshd, each mount's TCP
 * connection through a relay that adds a LAN-like delay in each direction (default 0.25 ms),
 * crawl one many-host site on loopback whose every response takes about 100 ms. The nodes are
 * latency-bound (small --concurrency), so that on a small machine the bench measures the
 * protocol, not the CPU. Each N runs `--runs` times, the Ns alternated. Prints, per N, the
 * median wall time and its spread, speedup and efficiency against N = 1 and against the ideal
 * cluster (bench/ideal-cluster.ts); per run, duplicate fetches and the most requests in flight
 * on one host (the site's counts), the machine's CPU, and the discovery latency across nodes
 * (bench/discovery-latency.ts); per node its CPU, its discovery CPU (reseeds and hand-offs),
 * bytes through its mount and SFTP requests per page (bench/cluster-mounts.ts says how they
 * are counted); writes bench/results/<date>-cluster.json. docs/benchmarks.md has the options
 * and the results.
 *
 * Exits 3 (and says what is missing) when sshd, sshfs, FUSE or python3 are not there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { DEFAULTS } from '../src/config/crawl-config.js';
import { pagePath, startGeneratedSite, type GeneratedSiteOptions } from '../src/site/generated-site.js';
import type { LoopbackSite } from '../src/site/site-server.js';
import { tempOwner } from '../src/store/temp-names.js';
import { ClusterMounts, clusterMissing, type MountCounts } from './cluster-mounts.js';
import { NODE_EVENTS, clusterTables, type ClusterRow, type NodeRow } from './cluster-report.js';
import { CpuSampler } from './cpu-sampler.js';
import { discoveryLatency } from './discovery-latency.js';
import { idealCluster, type IdealCluster } from './ideal-cluster.js';
import { round, wholeArg } from './measure.js';
import { MOUNTCRAWL_BIN, REPO } from './peers.js';
import { benchArgs } from './args.js';

const { values: o } = benchArgs({
  options: {
    nodes: { type: 'string', default: '1,2,4,8' },
    hosts: { type: 'string', default: '200' },
    pages: { type: 'string', default: '25' },
    latency: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '4' },
    'per-host': { type: 'string', default: '1' },
    delay: { type: 'string', default: '0' },
    'link-delay': { type: 'string', default: '0.25' },
    local: { type: 'boolean', default: false },
    runs: { type: 'string', default: '3' },
    timeout: { type: 'string', default: '900' },
    python: { type: 'string', default: '/usr/bin/python3' },
    results: { type: 'string', default: join(REPO, 'bench', 'results') },
    'node-args': { type: 'string', default: '' },
    bin: { type: 'string', default: MOUNTCRAWL_BIN },
    fault: { type: 'string', default: 'none' },
    'fault-at': { type: 'string', default: '5' },
    'fault-for': { type: 'string', default: '20' },
    help: { type: 'boolean', default: false },
  },
});
if (o.help) {
  process.stdout.write(`node dist/bench/cluster.js [options]: N nodes crawl one generated site (docs/benchmarks.md, "Scale-out")
  --nodes 1,2,4,8        node counts, run in this order, alternated --runs times
  --runs 3               runs of each N (medians and spread are reported)
  --hosts 200 --pages 25 the site: hosts x pages per host (6 links a page, 2 to other hosts)
  --latency 100          ms before every response
  --concurrency 4 --per-host 1 --delay 0   each node's politeness and slots
  --local                every node on one local directory (default: sshfs mounts through a relay)
  --link-delay 0.25      the relay's delay per direction, ms
  --node-args='...'      more options for every node (e.g. --heartbeat 500)
  --bin PATH             another checkout's bin/mountcrawl.js
  --fault cut|stall --fault-at 5 --fault-for 20   a fault of node n1's link (relay only)
  --timeout 900          seconds before a node is killed
  --results DIR          where the JSON results go (bench/results)
  --python PATH          the Python that runs the relay
`);
  process.exit(0);
}
const log = (line: string): void => void process.stderr.write(`cluster bench: ${line}\n`);
const num = (name: keyof typeof o, min: number): number => wholeArg('cluster bench', name, o[name] as string, min);
const counts = o.nodes!.split(',').map((s) => wholeArg('cluster bench', 'nodes', s, 1));
const hosts = num('hosts', 1);
const pagesPerHost = num('pages', 1);
const latencyMs = num('latency', 0);
const concurrency = num('concurrency', 1);
const perHost = num('per-host', 1);
const runs = num('runs', 1);
const delayMs = num('delay', 0);
const linkDelayMs = Number(o['link-delay']);
if (!(linkDelayMs >= 0)) {
  log(`--link-delay must be a number of milliseconds, not '${o['link-delay']}'`);
  process.exit(2);
}
if (hosts > 5000) {
  log('--hosts must be at most 5000 (250 addresses in each of 127.0.0.x .. 127.0.19.x)');
  process.exit(2);
}
const nodeArgs = o['node-args']!.split(' ').filter((a) => a !== '');
/** The nodes' heartbeat interval: the one a --node-args sets, or the default. */
const heartbeatAt = nodeArgs.findIndex((a) => a === '--heartbeat' || a.startsWith('--heartbeat='));
const heartbeatMs =
  heartbeatAt < 0
    ? DEFAULTS.heartbeatMs
    : Number(nodeArgs[heartbeatAt]!.includes('=') ? nodeArgs[heartbeatAt]!.split('=')[1] : nodeArgs[heartbeatAt + 1]);
const fault = o.fault!;
if (fault !== 'none' && fault !== 'cut' && fault !== 'stall') {
  log(`--fault must be none, cut or stall, not '${fault}'`);
  process.exit(2);
}
if (fault !== 'none' && o.local) {
  log('--fault needs the relayed sshfs mounts (not --local)');
  process.exit(2);
}
const faultAt = num('fault-at', 0);
const faultFor = num('fault-for', 1);

const children = new Set<ChildProcess>();
let mounts: ClusterMounts | undefined;
let site: LoopbackSite | undefined;
let local: string | undefined;
let interrupted = false;

async function cleanup(): Promise<void> {
  for (const c of children) c.kill('SIGKILL');
  await mounts?.stop();
  await site?.close();
  if (local !== undefined) await rm(local, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    interrupted = true;
    log(`${signal}: stopping the nodes, unmounting, stopping sshd and the relay`);
    void cleanup().finally(() => process.exit(130));
  });
}

/** Runs one node to its end; resolves with its exit code and the summary it printed (--json). `onStarted`: at its "node started" line. */
function runNode(
  id: string,
  data: string,
  seeds: readonly string[],
  started: number,
  onStarted?: () => void,
): Promise<{ code: number; summary: Record<string, unknown> | undefined; events: Record<string, number>; exitSeconds: number }> {
  const args = [o.bin!, 'crawl', ...seeds, '--data', data, '--node-id', id, '--per-host', String(perHost)];
  args.push('--delay', String(delayMs), '--concurrency', String(concurrency), '--max-depth', '1000', '--json', ...nodeArgs);
  // --no-progress would also drop the info lines that NODE_EVENTS counts (a takeover is one): a fault run keeps them.
  if (fault === 'none') args.push('--no-progress');
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  const killer = setTimeout(() => child.kill('SIGKILL'), num('timeout', 1) * 1000);
  let stderr = '';
  let summary: Record<string, unknown> | undefined;
  // The last line that is not a JSON log line (a crash's message), for when the node fails.
  let lastOther = '';
  const events: Record<string, number> = {};
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    let nl: number;
    while ((nl = stderr.indexOf('\n')) >= 0) {
      const line = stderr.slice(0, nl);
      stderr = stderr.slice(nl + 1);
      if (!line.startsWith('{')) lastOther = line;
      if (line.includes('"msg":"summary"')) summary = JSON.parse(line) as Record<string, unknown>;
      else if (line.includes('"msg":"node started"')) onStarted?.();
      else if (line.includes('"level":"error"')) log(`${id}: ${line}`);
      for (const [k, msg] of Object.entries(NODE_EVENTS)) if (line.includes(`"msg":"${msg}"`)) events[k] = (events[k] ?? 0) + 1;
    }
  });
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(killer);
      children.delete(child);
      if (code !== 0) log(`node ${id} exited ${code}${lastOther === '' ? '' : `: ${lastOther}`}`);
      resolve({ code: code ?? 1, summary, events, exitSeconds: round((performance.now() - started) / 1000, 2) });
    }),
  );
}

/**
 * At the fault: the hosts whose lease n1 holds (read on the export, the server's side) and
 * the requests the site has in flight for them, so that duplicates can be set against what
 * n1 had in flight. Requests in flight when the site answers late still count at the cut.
 */
async function n1AtFault(runDir: string, s: LoopbackSite): Promise<{ n1Hosts: number; n1InFlightAtFault: number }> {
  const inFlight = new Map(s.hosts.map((h) => [h.hostDir, s.inFlight(h.index)]));
  const leases = (await readdir(join(runDir, 'hosts')).catch(() => [] as string[])).filter((f) => f.endsWith('.lease'));
  let n1Hosts = 0;
  let n1InFlightAtFault = 0;
  for (const f of leases) {
    const holder = await readFile(join(runDir, 'hosts', f), 'utf8').then(
      (t) => (JSON.parse(t) as { node?: string }).node,
      () => undefined,
    );
    if (holder !== 'n1') continue;
    n1Hosts++;
    n1InFlightAtFault += inFlight.get(f.slice(0, -'.lease'.length)) ?? 0;
  }
  return { n1Hosts, n1InFlightAtFault };
}

async function runCluster(n: number, attempt: number): Promise<ClusterRow> {
  const s = site!;
  s.reset();
  const name = `run-${n}-${attempt}-${Date.now()}`;
  const dirs: string[] = [];
  if (mounts !== undefined) {
    await mkdir(join(mounts.export, name));
    for (let i = 0; i < n; i++) dirs.push(join(mounts.mounts[i]!, name));
    await mounts.mark();
  } else {
    await mkdir(join(local!, name));
    for (let i = 0; i < n; i++) dirs.push(join(local!, name));
  }
  const seeds = s.hosts.map((h) => `${h.origin}/`);
  const cpu = new CpuSampler();
  cpu.start();
  const started = performance.now();
  // --fault: node n1's link is cut (or stalled) --fault-at seconds after n1 said it started
  // (not after it was launched: on a loaded machine a node may take seconds to start, and a
  // cut then would find it holding nothing), for --fault-for seconds.
  const faultTimers: NodeJS.Timeout[] = [];
  let atFault = { n1Hosts: 0, n1InFlightAtFault: 0 };
  const scheduleFault = (): void => {
    if (fault === 'none' || mounts === undefined || faultTimers.length > 0) return;
    const m = mounts;
    faultTimers.push(
      setTimeout(() => {
        log(`N=${n}: ${fault === 'cut' ? 'cutting' : 'stalling'} n1's link for ${faultFor} s`);
        void m.fault(fault === 'cut' ? 'cut' : 'hold', 0, faultFor * 1000);
        void n1AtFault(join(m.export, name), s).then((a) => (atFault = a));
      }, faultAt * 1000),
    );
    if (fault === 'cut') {
      faultTimers.push(
        setTimeout(
          () => {
            log(`N=${n}: n1's link restored`);
            void m.fault('restore', 0);
          },
          (faultAt + faultFor) * 1000,
        ),
      );
    }
  };
  const results = await Promise.all(dirs.map((d, i) => runNode(`n${i + 1}`, d, seeds, started, i === 0 ? scheduleFault : undefined)));
  for (const t of faultTimers) clearTimeout(t);
  if (fault === 'cut') await mounts?.fault('restore', 0);
  const wallSeconds = (performance.now() - started) / 1000;
  const machineCpu = cpu.stop();
  const mc: (MountCounts | undefined)[] = mounts !== undefined ? await mounts.counts() : [];
  let fetched = 0;
  let duplicates = 0;
  const duplicateExamples: string[] = [];
  for (const [url, c] of s.counts) {
    duplicates += c - 1;
    if (c > 1 && duplicateExamples.length < 10) duplicateExamples.push(`${c}x ${url}`);
  }
  if (duplicates > 0) log(`N=${n}: fetched more than once: ${duplicateExamples.join(', ')}`);
  for (const h of s.hosts) for (let p = 0; p < pagesPerHost; p++) if (s.count(`${h.origin}${pagePath(p)}`) > 0) fetched++;
  const maxInFlight = Math.max(...s.hosts.map((h) => s.maxInFlight(h.index)));
  let firstRequest = Infinity;
  let lastRequest = -Infinity;
  for (const ts of s.times.values())
    for (const t of ts) [firstRequest, lastRequest] = [Math.min(firstRequest, t), Math.max(lastRequest, t)];
  const nodes: NodeRow[] = results.map((r, i) => {
    const sum = r.summary ?? {};
    const disc = (sum.discovery ?? {}) as Record<string, number>;
    const m = mc[i];
    return {
      node: `n${i + 1}`,
      exitCode: r.code,
      pages: Number(sum.pages ?? 0),
      cpuSeconds: Number(sum.cpuSeconds ?? NaN),
      discoveryCpuSeconds: Number(disc.cpuSeconds ?? NaN),
      reseeds: Number(disc.reseeds ?? 0),
      recordsRead: Number(disc.recordsRead ?? 0),
      handoffsRead: Number(disc.handoffsRead ?? 0),
      heartbeats: { beats: 0, meanMs: NaN, maxMs: NaN, ...((sum.heartbeats ?? {}) as Record<string, number>) },
      leftToNewOwner: Number(sum.leftToNewOwner ?? 0),
      events: r.events,
      exitSeconds: r.exitSeconds,
      ...(m === undefined ? {} : { mount: m }),
    };
  });
  const runDir = join(mounts?.export ?? local!, name);
  // Temporary files left on the mount: none may be, after a fault too (docs/protocol.md, "Faults of the mount").
  const onMount = fault === 'none' ? [] : await readdir(runDir, { recursive: true });
  const tempsLeft = onMount.filter((p) => tempOwner(basename(p)) !== undefined);
  if (tempsLeft.length > 0) log(`N=${n}: temporary files left on the mount: ${tempsLeft.slice(0, 10).join(', ')}`);
  const tempFilesLeft = tempsLeft.length;
  // The pages written, as the mount has them: a node's own count misses a write whose reply the fault lost.
  const linksRecords = onMount.filter((p) => p.startsWith('links/') && p.endsWith('.json') && !basename(p).startsWith('.')).length;
  // The site's times are performance.now() of this process; the records' commit times are epoch ms.
  const requests = new Map([...s.times].map(([url, ts]) => [url, ts.map((t) => performance.timeOrigin + t)]));
  const discovery = await discoveryLatency(runDir, requests, { serviceMs: latencyMs, slots: concurrency, seeds: new Set(seeds) });
  await rm(runDir, { recursive: true, force: true });
  const row: ClusterRow = {
    nodes: n,
    attempt,
    wallSeconds: round(wallSeconds, 2),
    pagesFetched: fetched,
    pagesPerSecond: round(fetched / wallSeconds, 1),
    coverage: round(fetched / (hosts * pagesPerHost), 4),
    duplicateFetches: duplicates,
    duplicateExamples,
    maxInFlightPerHost: maxInFlight,
    machineCpuSeconds: machineCpu.seconds,
    machineCpu,
    discovery,
    loadavg: loadavg().map((l) => round(l, 2)),
    firstRequestSeconds: round((firstRequest - started) / 1000, 2),
    lastRequestSeconds: round((lastRequest - started) / 1000, 2),
    perNode: nodes,
    ...(fault === 'none'
      ? {}
      : { fault: { kind: fault, atSeconds: faultAt, forSeconds: faultFor, tempFilesLeft, linksRecords, ...atFault } }),
  };
  const x = discovery.crossNode;
  log(
    `N=${n}: ${fetched} pages in ${row.wallSeconds} s (${row.pagesPerSecond} pages/s), ${duplicates} duplicate fetches, ` +
      `machine CPU ${machineCpu.meanCores} cores (peak ${machineCpu.peakCores} of ${machineCpu.cores}), ` +
      `discovery across nodes ${x.count} links, median ${x.medianMs} ms, p95 ${x.p95Ms} ms (host and slot idle: p95 ${discovery.crossNodeIdle.p95Ms} ms), load ${row.loadavg.join(' ')}`,
  );
  return row;
}

const command = `node dist/bench/cluster.js ${process.argv.slice(2).join(' ')}`.trim();
try {
  if (o.local) {
    local = await mkdtemp(join(tmpdir(), 'mountcrawl-cluster-local-'));
  } else {
    const missing = await clusterMissing(o.python!);
    if (missing !== undefined) {
      log(`cannot run: ${missing}`);
      process.exit(3);
    }
    mounts = await ClusterMounts.start(Math.max(...counts), linkDelayMs, o.python!);
    log(`sshd and ${mounts.mounts.length} mounts through a relay of ${linkDelayMs} ms per direction, under ${mounts.dir}`);
  }
  const shape: GeneratedSiteOptions = { hosts, pagesPerHost, linksPerPage: 6, crossLinks: 2 };
  site = await startGeneratedSite({ ...shape, latencyMs });
  log(
    `site: ${hosts} hosts x ${pagesPerHost} pages, ${latencyMs} ms per response; nodes: --concurrency ${concurrency} --per-host ${perHost} --delay ${delayMs}, heartbeat ${heartbeatMs} ms`,
  );
  const ideal = new Map<number, IdealCluster>();
  for (const n of new Set(counts)) {
    const i = idealCluster(shape, { slots: n * concurrency, perHost, delayMs, serviceMs: latencyMs });
    ideal.set(n, i);
    log(
      `ideal cluster of N=${n} (${n * concurrency} slots): ${round(i.greedySeconds, 2)} s; lower bound ${round(i.lowerBoundSeconds, 2)} s ` +
        `(work ${round(i.workSeconds, 2)}, slowest host ${round(i.hostSeconds, 2)}, path ${round(i.pathSeconds, 2)}: depth ${i.maxDepth})`,
    );
  }
  const rows: ClusterRow[] = [];
  for (let a = 1; a <= runs && !interrupted; a++) for (const n of counts) if (!interrupted) rows.push(await runCluster(n, a));
  // Interrupted: the cleanup is under way and exits 130; a cut-short run is not a result.
  if (interrupted) await new Promise(() => undefined);
  const where = o.local ? 'one local directory' : `sshfs through a ${linkDelayMs} ms relay`;
  process.stdout.write(clusterTables(rows, { where, ideal, heartbeatMs }));
  await mkdir(o.results!, { recursive: true });
  const file = join(
    o.results!,
    `${new Date().toISOString().replace(/[:]/g, '').replace(/\..*$/, 'Z')}-cluster${o.local ? '-local' : ''}.json`,
  );
  const setup = {
    hosts,
    pagesPerHost,
    latencyMs,
    concurrency,
    perHost,
    delayMs,
    heartbeatMs,
    linkDelayMs: o.local ? null : linkDelayMs,
    where,
  };
  await writeFile(file, `${JSON.stringify({ command, setup, ideal: Object.fromEntries(ideal), rows }, null, 1)}\n`);
  log(`wrote ${file}`);
  // A node that failed (not built, bad options, a mount gone) makes the run no measurement.
  const failed = rows.flatMap((r) => r.perNode.filter((n) => n.exitCode !== 0).map((n) => `${n.node} of N=${r.nodes}: exit ${n.exitCode}`));
  if (failed.length > 0) {
    log(`not a measurement: ${failed.length} node run(s) failed (${failed.slice(0, 4).join('; ')})`);
    process.exitCode = 1;
  }
} finally {
  await cleanup();
}
