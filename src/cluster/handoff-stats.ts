import type { CrawlStats } from '../progress/stats.js';

/**
 * Adds one discovery step to the node's counters (docs/protocol.md): a `reseed` that read
 * `read` links records, or a `handoff` pass that read `read` hand-off files, with the process
 * CPU used since `since` (a `process.cpuUsage()` taken when the step began; requests that
 * finish meanwhile are counted too, so this is an upper bound).
 */
export function countDiscovery(stats: CrawlStats, since: NodeJS.CpuUsage, kind: 'reseed' | 'handoff', read: number): void {
  const used = process.cpuUsage(since);
  const d = stats.discovery;
  if (kind === 'reseed') {
    d.reseeds++;
    d.recordsRead += read;
  } else {
    d.handoffsRead += read;
  }
  d.cpuMicros += used.user + used.system;
}
