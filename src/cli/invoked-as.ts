import { basename, relative } from 'node:path';

/**
 * The command as the user ran it, for hints such as "see `... status`": `npx mountcrawl`
 * under npx (or an npm script), `mountcrawl` when the program was found on the PATH (a global
 * install or node_modules/.bin), otherwise `node <path of bin/mountcrawl.js>` relative to the
 * working directory.
 */
export function invokedAs(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): string {
  if (env.npm_command === 'exec' || env.npm_command === 'run-script') return 'npx mountcrawl';
  const script = argv[1] ?? 'mountcrawl';
  if (basename(script) === 'mountcrawl') return 'mountcrawl';
  const rel = relative(cwd, script);
  return `node ${rel.startsWith('..') || rel === '' ? script : rel}`;
}
