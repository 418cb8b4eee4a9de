import type { CrawlStats } from '../../progress/stats.js';
import { hasRepeatedSegment } from '../traps.js';
import type { UrlRule } from './rule.js';

/** --max-repeated-segments: a path that repeats a segment that often is a trap (counted). */
export function trapRule(maxRepeatedSegments: number, stats: CrawlStats): UrlRule {
  return (c) => {
    if (!hasRepeatedSegment(c.url, maxRepeatedSegments)) return true;
    stats.cut.repeatedSegment++;
    return false;
  };
}
