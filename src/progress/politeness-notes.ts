import type { CrawlConfig } from '../config/crawl-config.js';
import type { PolitenessLimit } from '../frontier/politeness.js';

/** What each politeness rule is called where users read it, with the option that sets it. */
export const HELD_BACK_LABEL: Readonly<Record<PolitenessLimit, string>> = {
  delay: 'the per-host delay (--delay)',
  'crawl-delay': "robots.txt's Crawl-delay",
  'retry-after': 'a Retry-After pause',
  slowdown: 'the slow-down after server errors',
};

/**
 * The start line about politeness: how fast one host may be crawled, so that a slow crawl of
 * a small site is explained before anyone wonders (docs/options.md).
 */
export function politenessStartLine(config: Pick<CrawlConfig, 'perHost' | 'delayMs' | 'crawlDelayCapMs' | 'robots'>): string {
  const crawlDelay = config.robots
    ? `; robots.txt's Crawl-delay (up to ${config.crawlDelayCapMs / 1000} s) and Retry-After can slow a host further`
    : '';
  if (config.delayMs === 0)
    return `politeness: up to ${config.perHost} requests in flight per host, no delay between them (--delay 0)${crawlDelay}`;
  const perSecond = Math.round((1000 / config.delayMs) * 100) / 100;
  return (
    `politeness: one request start per host every ${config.delayMs} ms (--delay), up to ${config.perHost} in flight (--per-host): ` +
    `at most ${perSecond} pages/s from each host${crawlDelay}`
  );
}

/** The summary line saying which politeness rules held requests back, or undefined when none did. */
export function heldBackLine(heldBackBy: ReadonlyMap<PolitenessLimit, number>): string | undefined {
  const parts = [...heldBackBy].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  if (parts.length === 0) return undefined;
  const text = parts.map(([why, n]) => `${HELD_BACK_LABEL[why]} ${n} times`).join(', ');
  const hint = parts[0]![0] === 'delay' ? ' (--delay 0 lifts it: only on sites you run or may load hard)' : '';
  return `rate limited by politeness: requests waited for ${text}${hint}`;
}
