import type { CrawlStats } from '../progress/stats.js';

/**
 * What a node's metrics are made of (docs/operations.md, "Metrics"): a plain copy of its
 * counters (src/progress/stats.ts), which a child of --processes sends its supervisor with
 * its progress, so that one endpoint serves every node of the machine.
 */
export interface MetricSample {
  /** Links records written, by `html` or `other` and the HTTP status (`html 200`, `other 301`). */
  readonly pages: Readonly<Record<string, number>>;
  readonly bytes: number;
  /** Requests sent, by the HTTP status of the answer (`none`: no answer came). */
  readonly requests: Readonly<Record<string, number>>;
  /** Errs records written, by code (HTTP_404, FETCH_TIMEOUT, ...; a retried URL counts each time). */
  readonly errors: Readonly<Record<string, number>>;
  /** Failures that became final, by code. */
  readonly finalErrors: Readonly<Record<string, number>>;
  readonly queued: number;
  readonly inFlight: number;
  readonly hostsHeld: number;
  readonly hostsLent: number;
  readonly nodesAlive: number;
  readonly state: string;
  readonly heartbeats: { readonly beats: number; readonly totalMs: number; readonly maxMs: number };
  /** Times a host with work waited for its next request, by the rule that held it back. */
  readonly politenessWaits: Readonly<Record<string, number>>;
  /** What the crawl cut off on purpose, by reason (docs/options.md, "Limits and traps"). */
  readonly cut: Readonly<Record<string, number>>;
}

/** The sample of a node's counters now. */
export function sampleOf(stats: CrawlStats): MetricSample {
  return {
    pages: Object.fromEntries(stats.pagesBy),
    bytes: stats.bytes,
    requests: Object.fromEntries(stats.requestsByStatus),
    errors: Object.fromEntries(stats.errors),
    finalErrors: Object.fromEntries(stats.finalErrors),
    queued: stats.queued,
    inFlight: stats.inFlight,
    hostsHeld: stats.hostsOwned,
    hostsLent: stats.hostsLent,
    nodesAlive: stats.nodesAlive,
    state: stats.state,
    heartbeats: { ...stats.heartbeats },
    politenessWaits: Object.fromEntries(stats.heldBackBy),
    cut: { ...stats.cut },
  };
}
