import type { CrawlConfig } from '../config/crawl-config.js';
import { ExitCode, FatalError } from '../errors.js';

/** `--processes N`: not built yet; it refuses clearly instead of pretending. */
export async function runSupervisor(_config: CrawlConfig, _processes: number, _argv: readonly string[]): Promise<number> {
  throw new FatalError('NOT_IMPLEMENTED', '--processes N is not built yet: start N crawl commands by hand', ExitCode.USAGE);
}
