import type { CrawlConfig } from '../config/crawl-config.js';
import { ExitCode, FatalError, noSeedsError } from '../errors.js';
import { ScopeFilter } from '../frontier/scope.js';
import { hasSeeds } from '../reseed/seeds.js';
import { Layout } from '../store/layout.js';

/**
 * Refuses a crawl that has nothing to start from, before anything is created or printed: a
 * mistyped command leaves no new data directory behind. NO_SEEDS: no URL, no --sitemap,
 * nothing in the data directory's seeds/, no --watch. SEEDS_FILTERED: URLs were given and
 * --include / --exclude leave out every one of them (the crawl would end at once with 0
 * pages). Reads only; a directory that does not exist has no seeds, one that cannot be read
 * is not refused here.
 */
export async function refuseWithoutSeeds(config: CrawlConfig): Promise<void> {
  if (config.seedUrls.length > 0) {
    const filter = new ScopeFilter(config.scope, config.include, config.exclude);
    if (!config.seedUrls.some((url) => filter.accepts(url))) {
      const which =
        config.include.length > 0 && config.exclude.length > 0
          ? '--include / --exclude'
          : config.include.length > 0
            ? '--include'
            : '--exclude';
      const n = config.seedUrls.length;
      throw new FatalError(
        'SEEDS_FILTERED',
        `${which} leaves out ${n === 1 ? 'the seed' : `all ${n} seeds`} (${config.seedUrls[0]}${n > 1 ? ', ...' : ''}): nothing would be crawled`,
        ExitCode.USAGE,
      );
    }
  }
  if (config.watch || config.seedUrls.length > 0 || (config.sitemapUrls ?? []).length > 0) return;
  // A seeds/ that cannot be read (a failing mount) is not known empty: the node starts and waits the mount out.
  if (!(await hasSeeds(new Layout(config.dataDir)).catch(() => true))) throw noSeedsError(config.dataDir);
}
