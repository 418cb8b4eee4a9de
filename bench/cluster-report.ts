import type { MountCounts } from './cluster-mounts.js';
import type { MachineCpu } from './cpu-sampler.js';
import { quantile, type DiscoveryLatency } from './discovery-latency.js';
import type { IdealCluster } from './ideal-cluster.js';
import { round } from './measure.js';

/** One node of one run of `npm run bench:cluster`. */
export interface NodeRow {
  readonly node: string;
  readonly exitCode: number;
  /** Links records this node wrote (its summary). */
  readonly pages: number;
  /** CPU seconds of the node's process (its summary: process.cpuUsage at the end). */
  readonly cpuSeconds: number;
  /** CPU seconds while reseeds and hand-off reads ran (an upper bound: see src/cluster/handoff-stats.ts). */
  readonly discoveryCpuSeconds: number;
  readonly reseeds: number;
  readonly recordsRead: number;
  readonly handoffsRead: number;
  /** Heartbeats the node ran, their mean and longest wall time (its summary). */
  readonly heartbeats: { readonly beats: number; readonly meanMs: number; readonly maxMs: number };
  /** What went through its mount (absent on a local directory). */
  readonly mount?: MountCounts;
  /** Pages it fetched but did not write, their hosts passed to another node (its summary). */
  readonly leftToNewOwner: number;
  /** How many times it logged each of NODE_EVENTS (takeovers, lost leases, fencing, mount faults). */
  readonly events: Readonly<Record<string, number>>;
  /** When it exited, in seconds from the first node's start. */
  readonly exitSeconds: number;
}

/** Log messages of a node that the bench counts (what a fault of its link made it do). */
export const NODE_EVENTS = {
  tookOver: 'took host over',
  lostLease: 'lost the lease of a host',
  fencedBack: 'reached the mount again',
  mountBack: 'the mount is back: crawling again',
} as const;

/** One run of N nodes. */
export interface ClusterRow {
  readonly nodes: number;
  readonly attempt: number;
  readonly wallSeconds: number;
  /** Distinct pages of the site fetched (the site's count). */
  readonly pagesFetched: number;
  readonly pagesPerSecond: number;
  readonly coverage: number;
  /** Requests beyond the first for the same URL, robots.txt included (the site's count). */
  readonly duplicateFetches: number;
  /** Up to 10 of the URLs fetched more than once, with their counts. */
  readonly duplicateExamples: readonly string[];
  readonly maxInFlightPerHost: number;
  /** CPU the whole machine used during the run (/proc/stat): everything, other programs too. */
  readonly machineCpuSeconds: number;
  /** The same, with the cores busy on average and in the busiest second. */
  readonly machineCpu: MachineCpu;
  /** From a page's commit to the first request for a link on it (bench/discovery-latency.ts). */
  readonly discovery: DiscoveryLatency;
  readonly loadavg: number[];
  /** Seconds from the first node's start to the first request the site saw, and to the start of the last one. */
  readonly firstRequestSeconds: number;
  readonly lastRequestSeconds: number;
  readonly perNode: NodeRow[];
  /** With --fault: what was done to node n1's link, and the temporary files left on the mount after the run. */
  readonly fault?: {
    readonly kind: string;
    /** Seconds after n1's "node started" line. */
    readonly atSeconds: number;
    readonly forSeconds: number;
    readonly tempFilesLeft: number;
    /** Links records on the mount after the run: the pages written (a node's own count misses a write whose reply was lost). */
    readonly linksRecords: number;
    /** Hosts whose lease n1 held at the cut, and the requests the site had in flight for them then. */
    readonly n1Hosts: number;
    readonly n1InFlightAtFault: number;
  };
}

const mean = (xs: number[]): number => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

/** Per node, averaged over the nodes of a run, per page the whole cluster fetched. */
export function perPage(row: ClusterRow): {
  cpuMs: number;
  discoveryCpuMs: number;
  requests: number;
  readKb: number;
  downKb: number;
  upKb: number;
} {
  const p = Math.max(1, row.pagesFetched);
  const n = row.perNode;
  const m = n.map((x) => x.mount).filter((x): x is MountCounts => x !== undefined);
  return {
    cpuMs: round((mean(n.map((x) => x.cpuSeconds)) * 1000) / p, 3),
    discoveryCpuMs: round((mean(n.map((x) => x.discoveryCpuSeconds)) * 1000) / p, 3),
    requests: round(mean(m.map((x) => x.requests)) / p, 2),
    readKb: round(mean(m.map((x) => x.readBytes)) / 1024 / p, 2),
    downKb: round(mean(m.map((x) => x.down)) / 1024 / p, 2),
    upKb: round(mean(m.map((x) => x.up)) / 1024 / p, 2),
  };
}

/** What the tables are set against: where the nodes ran, the ideal cluster of each N, the nodes' heartbeat interval. */
export interface ClusterSetup {
  readonly where: string;
  readonly ideal: ReadonlyMap<number, IdealCluster>;
  readonly heartbeatMs: number;
}

const median = (xs: readonly number[]): number => quantile(xs, 0.5);
const ms = (n: number): string => (Number.isNaN(n) ? '-' : String(n));
/** A speedup, '-' without N = 1 runs to set it against. */
const times = (n: number): string => (Number.isNaN(n) ? '-' : `${round(n, 2)}x`);

/** The tables the bench prints (markdown, as docs/benchmarks.md records them). */
export function clusterTables(rows: readonly ClusterRow[], setup: ClusterSetup): string {
  const ns = [...new Set(rows.map((r) => r.nodes))];
  // A run with a failed node, or that missed pages, is no measurement: it stays out of the medians.
  const ok = (r: ClusterRow): boolean => r.coverage === 1 && r.perNode.every((n) => n.exitCode === 0);
  const walls = (n: number): number[] => rows.filter((r) => r.nodes === n && ok(r)).map((r) => r.wallSeconds);
  const base = median(walls(1));
  const ideal1 = setup.ideal.get(1);
  const out = [
    `Nodes on ${setup.where}. Runs: those where every node exited 0 and every page was fetched. Speedup: the median wall time of the N = 1 runs over the median of N's. ` +
      'Ideal: the ideal cluster of N (docs/benchmarks.md, "The ideal cluster"): its greedy schedule, and the lower bound no schedule beats; ' +
      'efficiency against it: its time over the median wall time. Discovery across nodes: per run, the median and p95 of the time from ' +
      "a page's commit to the first request for a link on it that another node fetched, and of that time only what its host spent idle while the node that fetched it had a free slot; " +
      `here, the median of the runs' values, against a heartbeat of ${setup.heartbeatMs} ms.`,
    '',
    '| N | runs | wall s, median (min to max) | speedup | efficiency | ideal s (lower bound s) | ideal speedup | efficiency against ideal | dup. fetches, most | max in flight/host | discovery across nodes ms, median, p95 | host and slot idle ms, median, p95 |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const n of ns) {
    const all = rows.filter((r) => r.nodes === n);
    const rs = all.filter(ok);
    const w = walls(n);
    if (rs.length === 0) {
      out.push(`| ${n} | 0 of ${all.length} | no run completed (a node failed or pages were missed) | - | - | - | - | - | - | - | - | - |`);
      continue;
    }
    const speedup = base / median(w);
    const i = setup.ideal.get(n);
    const idealCell = i === undefined ? '-' : `${round(i.greedySeconds, 2)} (${round(i.lowerBoundSeconds, 2)})`;
    const idealSpeedup = i === undefined || ideal1 === undefined ? '-' : `${round(ideal1.greedySeconds / i.greedySeconds, 2)}x`;
    const againstIdeal = i === undefined || i.greedySeconds === 0 ? '-' : `${round((100 * i.greedySeconds) / median(w), 0)}%`;
    const d = (k: 'medianMs' | 'p95Ms', of: 'crossNode' | 'crossNodeIdle' = 'crossNode'): string =>
      ms(median(rs.map((r) => r.discovery[of][k]).filter((x) => !Number.isNaN(x))));
    out.push(
      `| ${n} | ${rs.length === all.length ? rs.length : `${rs.length} of ${all.length}`} | ${round(median(w), 2)} (${Math.min(...w)} to ${Math.max(...w)}) | ${times(speedup)} | ${Number.isNaN(speedup) ? '-' : `${round((100 * speedup) / n, 0)}%`} | ` +
        `${idealCell} | ${idealSpeedup} | ${againstIdeal} | ${Math.max(...rs.map((r) => r.duplicateFetches))} | ${Math.max(...rs.map((r) => r.maxInFlightPerHost))} | ${d('medianMs')}, ${d('p95Ms')} | ${d('medianMs', 'crossNodeIdle')}, ${d('p95Ms', 'crossNodeIdle')} |`,
    );
  }
  out.push(
    '',
    "Each run: speedup against the median N = 1 run; the machine's CPU (every process: CPU seconds, cores busy on average and in the busiest second, " +
      "of the machine's cores) and the nodes' own CPU seconds; discovery latency in ms (links: how many pages were found by one node and " +
      "fetched by another; host and slot idle: of that time, what the link's host spent with no request in flight while the node that fetched it had a free slot; " +
      'found by the fetching node itself: the same for the rest, for comparison).',
    '',
    '| N | run | wall s | pages/s | speedup | coverage | dup. fetches | max in flight/host | machine CPU s, cores mean, peak (of) | nodes CPU s | across nodes: links, median, p95, max | host and slot idle: median, p95 | same node: links, median, p95 |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const r of rows) {
    const c = r.machineCpu;
    const x = r.discovery.crossNode;
    const y = r.discovery.sameNode;
    const z = r.discovery.crossNodeIdle;
    out.push(
      `| ${r.nodes} | ${r.attempt} | ${r.wallSeconds} | ${r.pagesPerSecond} | ${times(base / r.wallSeconds)} | ${r.coverage} | ${r.duplicateFetches} | ${r.maxInFlightPerHost} | ` +
        `${c.seconds}, ${c.meanCores}, ${c.peakCores} (${c.cores}) | ${round(
          r.perNode.reduce((a, n) => a + n.cpuSeconds, 0),
          1,
        )} | ` +
        `${x.count}, ${ms(x.medianMs)}, ${ms(x.p95Ms)}, ${ms(x.maxMs)} | ${ms(z.medianMs)}, ${ms(z.p95Ms)} | ${y.count}, ${ms(y.medianMs)}, ${ms(y.p95Ms)} |`,
    );
  }
  out.push(
    '',
    'Per node, averaged over the nodes of the run, per page the whole cluster fetched: CPU, discovery CPU (reseeds and hand-offs), ' +
      'SFTP requests, file bytes read (READ replies), bytes from and to the server through the relay.',
    '',
    '| N | run | CPU ms | discovery CPU ms | records read/node | hand-offs read/node | heartbeat ms (mean, max) | SFTP req. | read KB | relay down KB | relay up KB | requests by type (all nodes, per page) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const r of rows) {
    const pp = perPage(r);
    const byType = new Map<string, number>();
    for (const n of r.perNode) for (const [k, v] of Object.entries(n.mount?.ops ?? {})) byType.set(k, (byType.get(k) ?? 0) + v);
    const types = [...byType]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${round(v / Math.max(1, r.pagesFetched), 2)}`)
      .join(', ');
    out.push(
      `| ${r.nodes} | ${r.attempt} | ${pp.cpuMs} | ${pp.discoveryCpuMs} | ${round(mean(r.perNode.map((n) => n.recordsRead)), 0)} | ` +
        `${round(mean(r.perNode.map((n) => n.handoffsRead)), 0)} | ${round(mean(r.perNode.map((n) => n.heartbeats.meanMs)), 1)}, ${Math.max(...r.perNode.map((n) => n.heartbeats.maxMs))} | ${pp.requests} | ${pp.readKb} | ${pp.downKb} | ${pp.upKb} | ${types || '-'} |`,
    );
  }
  const mounted = rows.filter((r) => r.perNode.some((n) => n.mount !== undefined));
  if (mounted.length > 0) {
    out.push(
      '',
      "SFTP requests per page: each node's requests over the pages it wrote (what a node's page costs its mount, which should not grow with N), " +
        "and all nodes' requests over all pages.",
      '',
      '| N | run | per page the node wrote, each node | per page the node wrote, median of nodes | all nodes, per page |',
      '| --- | --- | --- | --- | --- |',
    );
    for (const r of mounted) {
      const own = r.perNode.map((n) => round((n.mount?.requests ?? 0) / Math.max(1, n.pages), 2));
      const all = r.perNode.reduce((a, n) => a + (n.mount?.requests ?? 0), 0);
      out.push(`| ${r.nodes} | ${r.attempt} | ${own.join(', ')} | ${median(own)} | ${round(all / Math.max(1, r.pagesFetched), 2)} |`);
    }
  }
  out.push(
    '',
    "Where the wall time goes: the first request the site saw and the start of the last one, in seconds from the first node's start; " +
      'the pages each node wrote and when it exited; and the partition bound, the speedup the run could reach if every node were as fast as N = 1 ' +
      "(the cluster's pages over the busiest node's, when the nodes are latency-bound).",
    '',
    '| N | run | first request s | last request s | wall s | pages per node | exits, s | partition bound |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const r of rows) {
    const pages = r.perNode.map((n) => n.pages);
    const busiest = Math.max(1, ...pages);
    out.push(
      `| ${r.nodes} | ${r.attempt} | ${r.firstRequestSeconds} | ${r.lastRequestSeconds} | ${r.wallSeconds} | ${pages.join(', ')} | ${r.perNode.map((n) => n.exitSeconds).join(', ')} | ` +
        `${round(pages.reduce((a, b) => a + b, 0) / busiest, 2)}x |`,
    );
  }
  const faulted = rows.filter((r) => r.fault !== undefined);
  if (faulted.length > 0) {
    out.push(
      '',
      "Faults of node n1's link (the relay): exit codes, duplicates and coverage as above; n1's hosts (leases) and the site's requests in flight for them at the fault; what the nodes logged (hosts taken over from another node, leases found lost, a fenced node back on the mount); pages a node fetched and did not write because their host had passed to another node; the temporary files left on the mount.",
      '',
      '| N | run | fault | at s (after n1 started) | for s | exit codes | coverage | dup. fetches | n1 hosts, in flight at the fault | taken over | leases lost | back from fencing | fetched, left to the new owner | temporary files left |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const r of faulted) {
      const f = r.fault!;
      const events = (k: keyof typeof NODE_EVENTS): string => r.perNode.map((n) => n.events[k] ?? 0).join(', ');
      out.push(
        `| ${r.nodes} | ${r.attempt} | ${f.kind} | ${f.atSeconds} | ${f.forSeconds} | ${r.perNode.map((n) => n.exitCode).join(', ')} | ${r.coverage} | ${r.duplicateFetches} | ` +
          `${f.n1Hosts}, ${f.n1InFlightAtFault} | ${events('tookOver')} | ${events('lostLease')} | ${events('fencedBack')} | ${r.perNode.map((n) => n.leftToNewOwner).join(', ')} | ${f.tempFilesLeft} |`,
      );
    }
  }
  return `${out.join('\n')}\n`;
}
