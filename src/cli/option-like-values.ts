import type { Command } from 'commander';
import { ExitCode, FatalError } from '../errors.js';

/** Value placeholders of options that take a path or a URL (`--data <dir>`, `--proxy <url>`). */
const PATH_LIKE = /<(dir|file|url)>/;
const NOUN: Readonly<Record<string, string>> = { dir: 'a directory', file: 'a file name', url: 'a URL' };

/**
 * Refuses an option-like word as the value of an option that takes a path or a URL:
 * commander takes `--data --warc` as `--data` with the value `--warc` (and would make a data
 * directory named `--warc`). A value that really starts with `-` is written with `=`
 * (`--data=--odd-name`) or as `./--odd-name`. Looks at the words of `argv` after the
 * subcommand, up to `--`. Throws BAD_OPTION (exit 2) naming the option.
 */
export function refuseOptionLikeValues(program: Command, argv: readonly string[]): void {
  const sub = program.commands.find((c) => c.name() === argv[2]);
  if (sub === undefined) return;
  const kinds = new Map<string, string>();
  for (const o of [...program.options, ...sub.options]) {
    const m = PATH_LIKE.exec(o.flags);
    if (m !== null && o.long !== undefined) kinds.set(o.long, NOUN[m[1]!]!);
  }
  for (let i = 3; i < argv.length - 1; i++) {
    const word = argv[i]!;
    if (word === '--') return;
    const kind = kinds.get(word);
    const value = argv[i + 1]!;
    if (kind === undefined || !value.startsWith('-') || value === '-') continue;
    throw new FatalError(
      'BAD_OPTION',
      `${word} ${value}: ${value} looks like an option, not ${kind} (write ${word}=${value} if you mean it)`,
      ExitCode.USAGE,
    );
  }
}
