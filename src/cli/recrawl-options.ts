import { ExitCode, FatalError } from '../errors.js';
import { parseDurationMs } from '../recrawl/duration.js';
import type { RecrawlPolicy } from '../recrawl/recrawl-policy.js';

function duration(flag: string, raw: unknown): number {
  const ms = typeof raw === 'string' ? parseDurationMs(raw) : undefined;
  if (ms === undefined) {
    throw new FatalError(
      'BAD_OPTION',
      `${flag} must be a duration such as 0s, 90m, 12h or 7d (got ${JSON.stringify(raw)})`,
      ExitCode.USAGE,
    );
  }
  return ms;
}

/**
 * The shortest interval between two visits of a page that a node kept up by --watch accepts
 * (docs/recrawl.md): below it every page is fetched again as soon as it is stored, forever.
 */
export const WATCH_MIN_INTERVAL_MS = 1000;

/**
 * The recrawl policy of `crawl` (docs/recrawl.md), or undefined without --recrawl-after.
 * Throws FatalError(BAD_OPTION) for a bad duration, bounds that contradict each other, or an
 * interval under WATCH_MIN_INTERVAL_MS with --watch.
 */
export function buildRecrawlPolicy(o: Record<string, unknown>): RecrawlPolicy | undefined {
  if (o.recrawlAfter !== undefined && o.partition === 'url') {
    throw new FatalError('BAD_OPTION', '--recrawl-after works with --partition host only (docs/recrawl.md)', ExitCode.USAGE);
  }
  const others = ['recrawlAdaptive', 'recrawlMin', 'recrawlMax'].filter((k) => o[k] !== undefined);
  if (o.recrawlAfter === undefined) {
    if (others.length > 0)
      throw new FatalError('BAD_OPTION', '--recrawl-adaptive, --recrawl-min and --recrawl-max need --recrawl-after', ExitCode.USAGE);
    return undefined;
  }
  const afterMs = duration('--recrawl-after', o.recrawlAfter);
  const minMs = o.recrawlMin === undefined ? Math.floor(afterMs / 4) : duration('--recrawl-min', o.recrawlMin);
  const maxMs = o.recrawlMax === undefined ? afterMs * 8 : duration('--recrawl-max', o.recrawlMax);
  if (minMs > maxMs)
    throw new FatalError('BAD_OPTION', `--recrawl-min (${minMs} ms) is longer than --recrawl-max (${maxMs} ms)`, ExitCode.USAGE);
  const adaptive = o.recrawlAdaptive === true;
  if (o.watch === true) {
    // Without --recrawl-adaptive every interval is --recrawl-after; with it, as short as --recrawl-min.
    const [flag, shortest] = !adaptive
      ? ['--recrawl-after', afterMs]
      : [o.recrawlMin === undefined ? '--recrawl-min (a quarter of --recrawl-after unless given)' : '--recrawl-min', minMs];
    if (shortest < WATCH_MIN_INTERVAL_MS) {
      throw new FatalError(
        'BAD_OPTION',
        `--watch with ${flag} under 1s would fetch every page again as soon as it is stored, forever: use at least 1s (docs/recrawl.md)`,
        ExitCode.USAGE,
      );
    }
  }
  return Object.freeze({ afterMs, adaptive, minMs, maxMs });
}
