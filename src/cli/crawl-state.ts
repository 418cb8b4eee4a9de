import type { RunState } from '../store/run-state.js';

/** Where a crawl stands, as `status` says it (and --json gives it). */
export interface CrawlState {
  /** `running`, `complete`, `stopped` (with work left), `interrupted` (killed), `empty`, `unknown`. */
  readonly state: 'running' | 'complete' | 'stopped' | 'interrupted' | 'empty' | 'unknown';
  /** URLs queued and not fetched when the nodes stopped, every node's added up (undefined when not known). */
  readonly queued?: number;
  /** URLs known on disk but not held in memory when it stopped (the next reseed finds them). */
  readonly leftOnDisk?: number;
  /** Errs records not final: tried again in this run or the next. */
  readonly retriesPending: number;
  readonly nextRetryAt: string | null;
  /** One line for people. */
  readonly line: string;
}

/** Node states of a record whose node is at work or about to be. */
const WORKING = new Set(['starting', 'crawling', 'idle', 'waiting', 'paused']);

/**
 * Tells complete from stopped-with-work-left from running (docs/options.md, `status`): a
 * live node means running (one whose aliveness was not checked, with --no-wait, counts when
 * its record says it works); otherwise the ends of run of this run's nodes (each node's own,
 * `ends`) and the run state the last node wrote say whether the crawl was complete or stopped,
 * and what every node left queued; a run state still `running` with no live node means a node
 * was killed. Retries pending are the errs records that are not final.
 */
export function describeCrawlState(input: {
  nodes: readonly { alive: boolean | null; state?: string }[];
  run: RunState | undefined;
  /** Each node's own end of run (src/store/run-state.ts readNodeEnds); absent in older directories. */
  ends?: readonly RunState[];
  retries: { pending: number; nextAt: string | null };
  pages: number;
  seeds: number;
}): CrawlState {
  const { nodes, run, retries } = input;
  const ends = input.ends ?? [];
  const retryText =
    retries.pending === 0
      ? ''
      : `, ${retries.pending} ${retries.pending === 1 ? 'retry' : 'retries'} pending${retries.nextAt ? ` (next due ${retries.nextAt})` : ''}`;
  const base = { retriesPending: retries.pending, nextRetryAt: retries.nextAt };
  const live = nodes.filter((n) => n.alive === true || (n.alive === null && (n.state === undefined || WORKING.has(n.state)))).length;
  const alive = nodes.filter((n) => n.alive !== false).length;
  if (live > 0 || (alive > 0 && run?.state === 'running')) {
    const count = live > 0 ? live : alive;
    return { ...base, state: 'running', line: `running: ${count} ${count === 1 ? 'node' : 'nodes'}${retryText}` };
  }
  const stoppedEnds = ends.filter((e) => e.state === 'stopped');
  const stopped = stoppedEnds.length > 0 ? stoppedEnds : run?.state === 'stopped' ? [run] : [];
  if (run?.state === 'complete' && stoppedEnds.length === 0) {
    const later = retries.pending > 0 ? `; ${retries.pending} URLs failed transiently and are tried again by the next run` : '';
    return { ...base, state: 'complete', line: `complete (ended ${run.at})${later}` };
  }
  if (stopped.length > 0) {
    const queued = queuedLeft(stopped);
    const onDisk = stopped.reduce((a, e) => a + (e.leftOnDisk ?? 0), 0);
    const last = stopped.reduce((a, e) => (e.at > a.at ? e : a));
    const when = `${last.reason ?? 'stopped'} at ${last.at}${stopped.length > 1 ? `, ${stopped.length} nodes` : ''}`;
    if (queued === 0 && onDisk === 0 && stopped.every((e) => e.idle === true)) {
      return {
        ...base,
        state: 'stopped',
        queued,
        leftOnDisk: onDisk,
        line: `stopped with nothing left to fetch (${when}): every node was idle${retryText}`,
      };
    }
    const work = `${queued} URLs known and not fetched${onDisk > 0 ? ` (and ${onDisk} more left on disk)` : ''}${retryText}`;
    return {
      ...base,
      state: 'stopped',
      queued,
      leftOnDisk: onDisk,
      line: `stopped with work left (${when}): ${work}; rerun the crawl to resume`,
    };
  }
  if (run?.state === 'running') {
    return {
      ...base,
      state: 'interrupted',
      line: `interrupted: a node ended without finishing (killed?)${retryText}; rerun the crawl to resume`,
    };
  }
  if (input.pages === 0 && input.seeds === 0 && retries.pending === 0)
    return { ...base, state: 'empty', line: 'empty: nothing crawled yet' };
  return { ...base, state: 'unknown', line: `unknown (no run recorded how it ended)${retryText}` };
}

/**
 * The URLs queued and not fetched that stopped nodes left, every node's added up, each host
 * once: when two ends name a host (a node took over a host of one that stopped before it), the
 * count of the node that saw the other leave stands, as it held the host later (leases: one
 * holder at a time); when neither saw the other leave, the larger. An end gives only hosts whose
 * queue was loaded: the URLs of a host still loading are its previous holder's count, or on disk
 * (the next reseed finds them). An end of an older version (no hosts) counts as it is.
 */
export function queuedLeft(ends: readonly RunState[]): number {
  let total = 0;
  const best = new Map<string, { from: RunState; count: number }>();
  for (const e of ends) {
    if (e.byHost === undefined) {
      total += e.queued ?? 0;
      continue;
    }
    const byHost = e.byHost;
    for (const [host, count] of Object.entries(byHost)) {
      const other = best.get(host);
      const later =
        other === undefined ||
        (e.departed ?? []).includes(other.from.node) ||
        (!(other.from.departed ?? []).includes(e.node) && count > other.count);
      if (later) best.set(host, { from: e, count });
    }
  }
  for (const { count } of best.values()) total += count;
  return total;
}
