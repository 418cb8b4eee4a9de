import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { LinksRecord } from '../src/store/records.js';

/** Latencies of one kind of discovery in a run, ms (NaN when there were none). */
export interface LatencyStats {
  readonly count: number;
  readonly medianMs: number;
  readonly p95Ms: number;
  readonly maxMs: number;
}

/**
 * How long a link took from the page that showed it to its first request (docs/benchmarks.md,
 * "Discovery latency"): for every page L of the site but the seeds, from the commit of the
 * first links record that lists L (its file's modification time: the record is written whole
 * to a temporary file, then renamed, docs/protocol.md) to the first request the site saw for
 * L. `crossNode`: the node that fetched L is not the node that wrote that record, so the link
 * reached it through the mount; `sameNode`: the node found the link itself.
 */
export interface DiscoveryLatency {
  readonly crossNode: LatencyStats;
  readonly sameNode: LatencyStats;
  /**
   * Of each cross-node latency, only the time L's host had no request in flight and the node
   * that fetched L had a free slot: the wait that is neither L queueing behind its host's other
   * pages (`--per-host 1`) nor behind its node's other hosts, so a slow hand-off shows even when
   * hosts and nodes are busy.
   */
  readonly crossNodeIdle: LatencyStats;
}

/** The `q` quantile of `xs` (nearest rank), NaN for none. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function stats(xs: readonly number[]): LatencyStats {
  const r = (n: number): number => Math.round(n);
  return { count: xs.length, medianMs: r(quantile(xs, 0.5)), p95Ms: r(quantile(xs, 0.95)), maxMs: r(quantile(xs, 1)) };
}

/** Busy time of one host: its requests as [start, end) intervals, in order, not overlapping. */
function busyIntervals(starts: number[], serviceMs: number): [number, number][] {
  const out: [number, number][] = [];
  for (const t of starts.sort((a, b) => a - b)) {
    const last = out[out.length - 1];
    if (last !== undefined && t <= last[1]) last[1] = Math.max(last[1], t + serviceMs);
    else out.push([t, t + serviceMs]);
  }
  return out;
}

/** When `slots` or more of `busy` (intervals, any order) overlap: [start, end) intervals, in order. */
function fullIntervals(busy: readonly [number, number][], slots: number): [number, number][] {
  const events = busy.flatMap(([a, b]): [number, number][] => [
    [a, 1],
    [b, -1],
  ]);
  // At equal times an end comes before a start: back-to-back requests do not overlap.
  events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const out: [number, number][] = [];
  let count = 0;
  for (const [t, d] of events) {
    if (d > 0 && ++count === slots) out.push([t, t]);
    if (d < 0 && count-- === slots) out[out.length - 1]![1] = t;
  }
  return out;
}

/** The union of two lists of intervals, in order, not overlapping. */
function union(a: readonly [number, number][], b: readonly [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [x, y] of [...a, ...b].sort((p, q) => p[0] - q[0])) {
    const last = out[out.length - 1];
    if (last !== undefined && x <= last[1]) last[1] = Math.max(last[1], y);
    else out.push([x, y]);
  }
  return out;
}

/** Time within [from, to) not covered by `busy` (in order, not overlapping). */
function idleWithin(busy: readonly [number, number][], from: number, to: number): number {
  let idle = Math.max(0, to - from);
  for (const [a, b] of busy) {
    if (a >= to) break;
    if (b > from) idle -= Math.min(b, to) - Math.max(a, from);
  }
  return idle;
}

/**
 * Reads every links record of the run's data directory `dataDir` (before it is removed) and
 * sets it against `requests`: the start of every request the site saw per URL, epoch ms on the
 * clock of the records' modification times (this machine's). A request is taken to keep its
 * host busy, and a slot of the node whose record has its URL (robots.txt: none), for
 * `serviceMs` (the site's latency); a node has `slots` (--concurrency). `seeds` are left out:
 * every node knows them from the start.
 */
export async function discoveryLatency(
  dataDir: string,
  requests: ReadonlyMap<string, readonly number[]>,
  options: { readonly serviceMs: number; readonly slots: number; readonly seeds: ReadonlySet<string> },
): Promise<DiscoveryLatency> {
  const { serviceMs, slots, seeds } = options;
  const byHost = new Map<string, number[]>();
  for (const [url, starts] of requests) {
    const origin = new URL(url).origin;
    const list = byHost.get(origin) ?? [];
    byHost.set(origin, list);
    list.push(...starts);
  }
  const busy = new Map([...byHost].map(([origin, starts]) => [origin, busyIntervals(starts, serviceMs)]));
  const fetchedBy = new Map<string, string>();
  // Per URL: the earliest commit of a record listing it, and the node that wrote that record.
  const firstLink = new Map<string, { at: number; node: string }>();
  const linksDir = join(dataDir, 'links');
  for (const host of await readdir(linksDir).catch(() => [] as string[])) {
    for (const f of await readdir(join(linksDir, host))) {
      if (f.startsWith('.') || !f.endsWith('.json')) continue;
      const path = join(linksDir, host, f);
      const [text, st] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
      const record = JSON.parse(text) as LinksRecord;
      fetchedBy.set(record.url, record.node);
      for (const link of record.links) {
        const seen = firstLink.get(link);
        if (seen === undefined || st.mtimeMs < seen.at) firstLink.set(link, { at: st.mtimeMs, node: record.node });
      }
    }
  }
  const byNode = new Map<string, [number, number][]>();
  for (const [url, node] of fetchedBy) {
    const list = byNode.get(node) ?? [];
    byNode.set(node, list);
    for (const t of requests.get(url) ?? []) list.push([t, t + serviceMs]);
  }
  const full = new Map([...byNode].map(([node, busyIn]) => [node, fullIntervals(busyIn, slots)]));
  const cross: number[] = [];
  const crossIdle: number[] = [];
  const same: number[] = [];
  for (const [url, node] of fetchedBy) {
    const link = firstLink.get(url);
    const requested = requests.get(url)?.reduce((a, b) => Math.min(a, b));
    if (seeds.has(url) || link === undefined || requested === undefined) continue;
    if (link.node === node) {
      same.push(requested - link.at);
    } else {
      cross.push(requested - link.at);
      crossIdle.push(idleWithin(union(busy.get(new URL(url).origin) ?? [], full.get(node) ?? []), link.at, requested));
    }
  }
  return { crossNode: stats(cross), sameNode: stats(same), crossNodeIdle: stats(crossIdle) };
}
