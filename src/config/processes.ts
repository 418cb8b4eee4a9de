import { availableParallelism } from 'node:os';
import { parseWhole } from './parse-values.js';

/**
 * `--processes N` or `--processes auto`. A node keeps about one core busy with its main
 * thread (requests, the frontier, commits) and uses another for its threads (links found in
 * ExtractThread, file writes) and the kernel's network and file work, so `auto` starts one
 * node per two cores: 1 on a 2-core machine, where a second node costs more CPU per page
 * than it adds (docs/benchmarks.md), 4 on 8 cores.
 */
export function parseProcesses(raw: string, cores: number = availableParallelism()): number {
  if (raw.trim().toLowerCase() === 'auto') return Math.max(1, Math.floor(cores / 2));
  return parseWhole('--processes', raw, 1);
}
