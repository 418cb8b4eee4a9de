import { availableParallelism } from 'node:os';
import { parseWhole } from './parse-values.js';

/**
 * `--processes N` or `--processes auto`. A node keeps about one core busy with its main
 * thread (requests, the frontier, commits) and uses another for its threads (links found in
 * ExtractThread, file writes) and the kernel's network and file work, so `auto` starts one
 * node per two cores: 1 on a 2-core machine, where a second node costs more CPU per page
 * than it adds (docs/benchmarks-log.md, "`--processes`"), 4 on 8 cores.
 */
export function parseProcesses(raw: string, cores: number = availableParallelism()): number {
  if (raw.trim().toLowerCase() === 'auto') return Math.max(1, Math.floor(cores / 2));
  return parseWhole('--processes', raw, 1);
}

/**
 * A warning for more nodes than this machine can run side by side (over two a core: each keeps
 * about one core busy), or undefined. They start anyway: a user may mean it for a crawl bound
 * by slow servers, but 64 on 2 cores mostly wait for the CPU.
 */
export function processesWarning(processes: number, cores: number = availableParallelism()): string | undefined {
  if (processes <= 2 * cores) return undefined;
  const auto = Math.max(1, Math.floor(cores / 2));
  return `--processes ${processes} on ${cores} cores: each node keeps about a core busy, so more than ${2 * cores} slow each other down (--processes auto starts ${auto})`;
}
