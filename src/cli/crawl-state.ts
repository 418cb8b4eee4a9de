import type { RunState } from '../store/run-state.js';

/** Where a crawl stands, as `status` says it (and --json gives it). */
export interface CrawlState {
  /** `running`, `complete`, `stopped` (with work left), `interrupted` (killed), `empty`, `unknown`. */
  readonly state: 'running' | 'complete' | 'stopped' | 'interrupted' | 'empty' | 'unknown';
  /** URLs queued and not fetched when the last node stopped (undefined when not known). */
  readonly queued?: number;
  /** URLs known on disk but not held in memory when it stopped (the next reseed finds them). */
  readonly leftOnDisk?: number;
  /** Errs records not final: tried again in this run or the next. */
  readonly retriesPending: number;
  readonly nextRetryAt: string | null;
  /** One line for people. */
  readonly line: string;
}

/**
 * Tells complete from stopped-with-work-left from running (docs/options.md, `status`): live
 * nodes mean running; otherwise the run state the last node wrote when it ended says
 * whether the crawl was complete or stopped and what it left queued; a run state still
 * `running` with no live node means a node was killed. Retries pending are the errs
 * records that are not final.
 */
export function describeCrawlState(input: {
  nodes: readonly { alive: boolean | null }[];
  run: RunState | undefined;
  retries: { pending: number; nextAt: string | null };
  pages: number;
  seeds: number;
}): CrawlState {
  const { nodes, run, retries } = input;
  const retryText =
    retries.pending === 0 ? '' : `, ${retries.pending} ${retries.pending === 1 ? 'retry' : 'retries'} pending${retries.nextAt ? ` (next due ${retries.nextAt})` : ''}`;
  const base = { retriesPending: retries.pending, nextRetryAt: retries.nextAt };
  const alive = nodes.filter((n) => n.alive !== false).length;
  if (nodes.some((n) => n.alive === true) || (alive > 0 && run?.state === 'running')) {
    return { ...base, state: 'running', line: `running: ${alive} ${alive === 1 ? 'node' : 'nodes'}${retryText}` };
  }
  if (run?.state === 'complete') {
    const later = retries.pending > 0 ? `; ${retries.pending} URLs failed transiently and are tried again by the next run` : '';
    return { ...base, state: 'complete', line: `complete (ended ${run.at})${later}` };
  }
  if (run?.state === 'stopped') {
    const queued = run.queued ?? 0;
    const onDisk = run.leftOnDisk ?? 0;
    const work = `${queued} URLs known and not fetched${onDisk > 0 ? ` (and ${onDisk} more left on disk)` : ''}${retryText}`;
    return {
      ...base,
      state: 'stopped',
      queued,
      leftOnDisk: onDisk,
      line: `stopped with work left (${run.reason ?? 'stopped'} at ${run.at}): ${work}; rerun the crawl to resume`,
    };
  }
  if (run?.state === 'running') {
    return { ...base, state: 'interrupted', line: `interrupted: a node ended without finishing (killed?)${retryText}; rerun the crawl to resume` };
  }
  if (input.pages === 0 && input.seeds === 0 && retries.pending === 0) return { ...base, state: 'empty', line: 'empty: nothing crawled yet' };
  return { ...base, state: 'unknown', line: `unknown (no run recorded how it ended)${retryText}` };
}
