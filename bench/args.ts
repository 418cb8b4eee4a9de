import { basename } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * `parseArgs` for the bench scripts: an unknown option or a missing value ends the script with
 * one line on stderr and exit code 2, not a stack trace.
 */
export function benchArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    process.stderr.write(`${basename(process.argv[1] ?? 'bench')}: ${(err as Error).message}\n`);
    process.exit(2);
  }
}
