import type { CrawlConfig } from '../config/crawl-config.js';
import { ExitCode, FatalError } from '../errors.js';
import type { Marker } from '../store/data-dir.js';
import { NORMALIZATION_VERSION, type NormalizeOptions } from '../url/normalize.js';

/**
 * The URL normalization a node must use on a data directory: keys depend on it, so every
 * node uses the one recorded in the directory's marker when it was created. An explicit
 * --session-params that disagrees is refused; so is a directory written with another
 * normalization version (its keys would not match).
 */
export function reconcileNormalization(marker: Marker, config: CrawlConfig): NormalizeOptions {
  const recorded = marker.normalization;
  if (recorded === undefined) return config.normalize;
  if (recorded.version !== NORMALIZATION_VERSION) {
    throw new FatalError(
      'FORMAT_MISMATCH',
      `${config.dataDir} was written with URL normalization version ${recorded.version}; this mountcrawl uses version ${NORMALIZATION_VERSION}`,
      ExitCode.DATA_DIR,
    );
  }
  const wanted = [...config.normalize.sessionParams].sort().join(',');
  const have = [...recorded.sessionParams].sort().join(',');
  if (wanted === have) return config.normalize;
  if (config.sessionParamsExplicit) {
    throw new FatalError(
      'BAD_OPTION',
      `--session-params ${JSON.stringify(wanted)} differs from ${JSON.stringify(have)}, which ${config.dataDir} was created with (keys depend on it): drop the option or use a new data directory`,
      ExitCode.USAGE,
    );
  }
  return Object.freeze({ ...config.normalize, sessionParams: new Set(recorded.sessionParams) });
}
