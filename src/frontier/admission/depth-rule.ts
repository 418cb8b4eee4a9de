import type { CrawlStats } from '../../progress/stats.js';
import type { UrlRule } from './rule.js';

/** --max-depth: links deeper than that are cut (and counted). */
export function depthRule(maxDepth: number, stats: CrawlStats): UrlRule {
  return (c) => {
    if (c.depth <= maxDepth) return true;
    stats.cut.depth++;
    return false;
  };
}
