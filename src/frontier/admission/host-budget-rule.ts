import type { CrawlStats } from '../../progress/stats.js';
import type { HostRule } from './rule.js';

/** --max-pages-per-host: pages fetched plus queued in this run (counted when cut). */
export function hostBudgetRule(maxPagesPerHost: number, stats: CrawlStats): HostRule {
  return (_c, host) => {
    if (host.fetched + host.queued < maxPagesPerHost) return true;
    stats.cut.hostBudget++;
    return false;
  };
}
