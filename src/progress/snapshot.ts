import type { CrawlStats } from './stats.js';
import { HELD_BACK_LABEL } from './politeness-notes.js';
import { plural } from '../util/plural.js';

/** One line of progress: what a node shows (and what a child sends its supervisor). */
export interface Snapshot {
  readonly label: string;
  readonly pages: number;
  readonly queued: number;
  readonly inFlight: number;
  /** Failures so far: URLs robots.txt excludes are no error (docs/errors.md). */
  readonly errors: number;
  readonly rate: number;
  readonly round: number;
  readonly hostsOwned: number;
  /** Nodes alive as this node sees them; 0 until a node has reported (the supervisor's total at its start). */
  readonly nodesAlive: number;
  readonly state: string;
}

export function snapshotOf(label: string, stats: CrawlStats): Snapshot {
  const held = stats.heldBackNow();
  return {
    label,
    pages: stats.pages,
    queued: stats.queued,
    inFlight: stats.inFlight,
    errors: stats.failureCount,
    rate: Math.round(stats.rate() * 10) / 10,
    round: stats.round,
    hostsOwned: stats.hostsOwned,
    nodesAlive: stats.nodesAlive,
    // A slow crawl says why: the rule that made hosts wait in the last seconds.
    state: held === undefined || stats.state !== 'crawling' ? stats.state : `${stats.state}, waiting for ${HELD_BACK_LABEL[held]}`,
  };
}

/** The sum of several nodes' snapshots (the supervisor's total line). */
export function totalOf(label: string, snaps: readonly Snapshot[]): Snapshot {
  const sum = (f: (s: Snapshot) => number): number => snaps.reduce((a, s) => a + f(s), 0);
  return {
    label,
    pages: sum((s) => s.pages),
    queued: sum((s) => s.queued),
    inFlight: sum((s) => s.inFlight),
    errors: sum((s) => s.errors),
    rate: Math.round(sum((s) => s.rate) * 10) / 10,
    round: Math.max(0, ...snaps.map((s) => s.round)),
    hostsOwned: sum((s) => s.hostsOwned),
    nodesAlive: Math.max(0, ...snaps.map((s) => s.nodesAlive)),
    state: snaps.every((s) => s.state === snaps[0]?.state) ? (snaps[0]?.state ?? 'starting') : 'mixed',
  };
}

/**
 * The end of a progress line: hosts and nodes once a node has reported (before, "0 hosts, 0
 * nodes" would be a guess), then the state when there is one.
 */
export function tailParts(s: Snapshot): string[] {
  const parts = s.nodesAlive > 0 ? [plural(s.hostsOwned, 'host'), plural(s.nodesAlive, 'node')] : [];
  return s.state === '' ? parts : [...parts, s.state];
}

/** One plain line for logs off a terminal. */
export function formatLine(s: Snapshot): string {
  const head = [
    plural(s.pages, 'page'),
    `${s.queued} queued`,
    `${s.inFlight} in flight`,
    plural(s.errors, 'error'),
    `${s.rate}/s`,
    `round ${s.round}`,
  ];
  return `${s.label}: ${[...head, ...tailParts(s)].join(', ')}`;
}
