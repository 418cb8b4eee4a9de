import { basename } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * `parseArgs` for the bench scripts: an unknown option or a missing value ends the script with
 * one line on stderr and exit code 2, not a stack trace. `--help` (when the script has no
 * help of its own) lists the script's options with their defaults and exits 0; the script's
 * header comment and docs/benchmarks.md say what they mean.
 */
export function benchArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const name = basename(process.argv[1] ?? 'bench');
  const args = config.args ?? process.argv.slice(2);
  const options = config.options ?? {};
  if (!('help' in options) && (args.includes('--help') || args.includes('-h'))) {
    process.stdout.write(`usage: node ${name} [options] (docs/benchmarks.md)\n`);
    for (const [option, o] of Object.entries(options)) {
      const value = o.type === 'string' ? ' VALUE' : '';
      const fallback = o.default === undefined ? '' : ` (default: ${String(o.default)})`;
      process.stdout.write(`  --${option}${value}${fallback}\n`);
    }
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (err) {
    process.stderr.write(`${name}: ${(err as Error).message}\n`);
    process.exit(2);
  }
}
