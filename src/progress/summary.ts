import type { CrawlStats } from './stats.js';
import { heldBackLine } from './politeness-notes.js';
import { EXCLUSION_CODES } from '../store/errs-tally.js';
import { plural } from '../util/plural.js';

/** Human-readable byte count. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/**
 * The end-of-run summary as data (printed as JSON with --json). `errors` and `finalErrors` hold
 * every errs record written, by code, exclusions included (ROBOTS_DISALLOWED); `excluded` says
 * how many of them robots.txt excluded, when any did.
 */
export function summaryOf(stats: CrawlStats, seconds: number, reason: string): Record<string, unknown> {
  const cut = Object.fromEntries(Object.entries(stats.cut).filter(([, v]) => v > 0));
  return {
    reason,
    pages: stats.pages,
    htmlPages: stats.htmlPages,
    bytes: stats.bytes,
    requests: stats.requests,
    seconds: Math.round(seconds * 10) / 10,
    pagesPerSecond: seconds > 0 ? Math.round((stats.pages / seconds) * 10) / 10 : 0,
    rounds: stats.round,
    cpuSeconds: Math.round(((process.cpuUsage().user + process.cpuUsage().system) / 1e6) * 1000) / 1000,
    discovery: { ...stats.discovery, cpuSeconds: Math.round(stats.discovery.cpuMicros / 1000) / 1000 },
    heartbeats: {
      beats: stats.heartbeats.beats,
      meanMs: stats.heartbeats.beats > 0 ? Math.round((stats.heartbeats.totalMs / stats.heartbeats.beats) * 10) / 10 : 0,
      // Rounded as the mean is: a mean of 24.46 ms is 24.5, and so is its maximum (was 24).
      maxMs: Math.round(stats.heartbeats.maxMs * 10) / 10,
    },
    ...(stats.leftToNewOwner > 0 ? { leftToNewOwner: stats.leftToNewOwner } : {}),
    ...(stats.hostsLent > 0 ? { hostsLent: stats.hostsLent } : {}),
    ...(stats.hookErrors > 0 ? { hookErrors: stats.hookErrors } : {}),
    ...(stats.hookTimeouts > 0 ? { hookTimeouts: stats.hookTimeouts } : {}),
    errors: Object.fromEntries([...stats.errors].sort((a, b) => b[1] - a[1])),
    finalErrors: Object.fromEntries([...stats.finalErrors].sort((a, b) => b[1] - a[1])),
    ...(stats.exclusionCount > 0 ? { excluded: stats.exclusionCount } : {}),
    cut,
    ...(stats.heldBackBy.size > 0 ? { heldBack: Object.fromEntries(stats.heldBackBy) } : {}),
  };
}

/** The end-of-run summary as a few plain lines. */
export function formatSummary(stats: CrawlStats, seconds: number, reason: string): string {
  const s = summaryOf(stats, seconds, reason);
  const lines = [
    `done (${reason}): ${plural(stats.pages, 'page')} (${stats.htmlPages} HTML, ${formatBytes(stats.bytes)}) in ${s.seconds} s, ` +
      `${s.pagesPerSecond} pages/s, ${plural(stats.requests, 'request')}, ${plural(stats.round, 'round')}`,
  ];
  const errs = Object.entries(s.errors as Record<string, number>).filter(([code]) => !EXCLUSION_CODES.has(code));
  lines.push(errs.length === 0 ? 'errors: none' : `errors: ${errs.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  const excluded = stats.exclusionCount;
  if (excluded > 0) lines.push(`excluded by robots.txt: ${plural(excluded, 'URL')} (not fetched)`);
  const cut = Object.entries(s.cut as Record<string, number>);
  if (cut.length > 0) lines.push(`cut: ${cut.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (stats.leftToNewOwner > 0) {
    lines.push(
      `${stats.leftToNewOwner} pages fetched but not written: their hosts had passed to another node, which fetches them (docs/protocol.md)`,
    );
  }
  const held = heldBackLine(stats.heldBackBy);
  if (held !== undefined) lines.push(held);
  if (stats.hookErrors > 0 || stats.hookTimeouts > 0) {
    lines.push(
      `--hook threw ${plural(stats.hookErrors, 'time')}, timed out ${plural(stats.hookTimeouts, 'time')} (each fell back as docs/hooks.md says; no page lost)`,
    );
  }
  return lines.join('\n');
}
