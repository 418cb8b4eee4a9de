/**
 * What a supervised child says to its supervisor over the IPC channel (docs/architecture.md,
 * "Processes"): its progress, and at its end the errs records of the hosts it held. The
 * supervisor reads these; knownErrs turns the end reports into the summary's known records.
 */
import type { MetricSample } from '../metrics/metric-sample.js';
import type { Snapshot } from '../progress/snapshot.js';
import type { HostErrs } from '../store/errs-tally.js';

/** What a supervised child sends its parent. */
export type ChildMessage =
  | {
      readonly type: 'progress';
      readonly snapshot: Snapshot;
      /** The hosts the node owns, when they changed since its last message (src/progress/host-tally.ts). */
      readonly hosts?: readonly string[];
      /** Its counters for the supervisor's /metrics (docs/operations.md), when the supervisor serves them. */
      readonly metrics?: MetricSample;
    }
  | {
      /** At its end: the errs records of the hosts it held to the end (CrawlNode.heldErrs), for the summary. */
      readonly type: 'held-errs';
      readonly held: readonly (readonly [string, WireHostErrs])[];
      /** What it owned (CrawlStats.hostsOwnedMost, hostsHandedOn): why a node that fetched nothing did. Absent: not known. */
      readonly owned?: HostsOwned;
    };

/** The hosts a node owned during its run: the most at once, and how many it let go to another node with their lease. */
export interface HostsOwned {
  readonly most: number;
  readonly handedOn: number;
}

/** The message a child sends at its end. */
export type HeldErrsMessage = Extract<ChildMessage, { type: 'held-errs' }>;

/** HostErrs through the IPC channel's JSON: no Infinity. */
type WireHostErrs = Omit<HostErrs, 'nextMs'> & { readonly nextMs: number | null };

/** A child's held-errs message for `held` (CrawlNode.heldErrs). */
export function heldErrsMessage(held: ReadonlyMap<string, HostErrs>, owned?: HostsOwned): ChildMessage {
  return {
    type: 'held-errs',
    held: [...held].map(([host, e]) => [host, { ...e, nextMs: Number.isFinite(e.nextMs) ? e.nextMs : null }] as const),
    ...(owned === undefined ? {} : { owned }),
  };
}

/**
 * The errs records the children held to the end, for the summary (readHoldings' `known`; the
 * caller uses them only when every child ended complete and said what it held), without a
 * host two of them name (one of them held it last, but which one is not known here).
 */
export function knownErrs(reports: readonly HeldErrsMessage[]): Map<string, HostErrs> {
  const known = new Map<string, HostErrs>();
  const twice = new Set<string>();
  for (const r of reports) {
    for (const [host, e] of r.held) {
      if (known.has(host)) twice.add(host);
      known.set(host, { ...e, nextMs: e.nextMs ?? Infinity });
    }
  }
  for (const host of twice) known.delete(host);
  return known;
}
