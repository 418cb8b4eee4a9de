import type { CrawlConfig } from '../config/crawl-config.js';
import { noSeedsError } from '../errors.js';
import { hasSeeds } from '../reseed/seeds.js';
import { Layout } from '../store/layout.js';

/**
 * Refuses a crawl that has nothing to start from (NO_SEEDS: no URL, no --sitemap, nothing in
 * the data directory's seeds/, no --watch) before anything is created or printed: a mistyped
 * command leaves no new data directory behind. Reads only; a directory that does not exist
 * has no seeds.
 */
export async function refuseWithoutSeeds(config: CrawlConfig): Promise<void> {
  if (config.watch || config.seedUrls.length > 0 || (config.sitemapUrls ?? []).length > 0) return;
  if (!(await hasSeeds(new Layout(config.dataDir)))) throw noSeedsError(config.dataDir);
}
