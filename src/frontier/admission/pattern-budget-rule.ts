import type { CrawlStats } from '../../progress/stats.js';
import { urlShape } from '../traps.js';
import type { HostRule } from './rule.js';

/**
 * --max-pages-per-pattern: URLs of one shape (src/frontier/traps.ts) admitted per host in
 * this run (counted when cut). An admitted URL is counted by the chain (Admission).
 */
export function patternBudgetRule(maxPagesPerPattern: number, stats: CrawlStats): HostRule {
  return (c, host) => {
    if (host.shapeCount(urlShape(c.url)) < maxPagesPerPattern) return true;
    stats.cut.patternBudget++;
    return false;
  };
}
