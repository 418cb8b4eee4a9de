import type { LinksRecord } from '../store/records.js';
import { nextIntervalMs, type RecrawlPolicy } from './recrawl-policy.js';

/** Visits kept in a links record's history (docs/recrawl.md). */
export const HISTORY_LENGTH = 8;

export interface Visit {
  readonly nowMs: number;
  readonly status: number;
  readonly changed: boolean;
  readonly bytes: number;
  readonly policy: RecrawlPolicy;
  /** The first fetch of the page: its interval starts at --recrawl-after. */
  readonly first?: boolean;
  /** For a 304: the node and duration of this visit replace the stored ones. */
  readonly node?: string;
  readonly durationMs?: number;
}

/**
 * A links record after one more visit: the visit appended to its history (the last
 * HISTORY_LENGTH kept), its fetch time, when it last changed, its next interval and due time.
 */
export function withVisit(record: LinksRecord, visit: Visit): LinksRecord {
  const at = new Date(visit.nowMs).toISOString();
  const intervalMs = visit.first === true ? visit.policy.afterMs : nextIntervalMs(record.intervalMs, visit.changed, visit.policy);
  const history = [...(record.history ?? []), { at, status: visit.status, changed: visit.changed, bytes: visit.bytes }].slice(
    -HISTORY_LENGTH,
  );
  return {
    ...record,
    fetchedAt: at,
    ...(visit.node !== undefined ? { node: visit.node } : {}),
    ...(visit.durationMs !== undefined ? { durationMs: visit.durationMs } : {}),
    changedAt: visit.changed ? at : (record.changedAt ?? at),
    intervalMs,
    nextFetchAt: new Date(visit.nowMs + intervalMs).toISOString(),
    history,
  };
}
