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
   * Of each cross-node latency, only the time L's host had no request in flight: the wait that
   * is not L queueing behind its host's other pages (`--per-host 1`), so a slow hand-off shows
   * even when hosts are busy.
   */
  readonly crossNodeHostIdle: LatencyStats;
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

/** Time within [from, to) not covered by `busy`. */
function idleWithin(busy: readonly [number, number][], from: number, to: number): number {
  let idle = Math.max(0, to - from);
  for (const [a, b] of busy) if (b > from && a < to) idle -= Math.min(b, to) - Math.max(a, from);
  return idle;
}

/**
 * Reads every links record of the run's data directory `dataDir` (before it is removed) and
 * sets it against `requests`: the start of every request the site saw per URL, epoch ms on the
 * clock of the records' modification times (this machine's). A request is taken to keep its
 * host busy for `serviceMs` (the site's latency). `seeds` are left out: every node knows them
 * from the start.
 */
export async function discoveryLatency(
  dataDir: string,
  requests: ReadonlyMap<string, readonly number[]>,
  serviceMs: number,
  seeds: ReadonlySet<string>,
): Promise<DiscoveryLatency> {
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
      crossIdle.push(idleWithin(busy.get(new URL(url).origin) ?? [], link.at, requested));
    }
  }
  return { crossNode: stats(cross), sameNode: stats(same), crossNodeHostIdle: stats(crossIdle) };
}
