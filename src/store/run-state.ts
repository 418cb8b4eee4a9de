import { DEFAULTS } from '../config/crawl-config.js';
import { writeFileAtomic } from './atomic-write.js';
import type { Layout } from './layout.js';
import { readJsonValidated } from './read-record.js';

/** Hidden (so that the data-directory check ignores it), at the root of the data directory. */
export const RUN_STATE_FILE = '.mountcrawl-run.json';

/**
 * How the last run that touched the data directory stands, as `status` reports it:
 * `running` from a node's start (a node killed by SIGKILL leaves it so), `complete` when the
 * crawl ended with nothing left (docs/protocol.md), `stopped` after Ctrl-C, SIGTERM, a
 * failed mount or --max-pages, with what was still queued in memory.
 */
export interface RunState {
  readonly state: 'running' | 'complete' | 'stopped';
  readonly node: string;
  readonly at: string;
  /** Why it stopped (`stopped`, `max-pages`, `mount-failed`, `nothing-fetched`). */
  readonly reason?: string;
  /** URLs queued in memory and not fetched when the node stopped. */
  readonly queued?: number;
  /** URLs known but left on disk because the frontier was full (the next reseed finds them). */
  readonly leftOnDisk?: number;
  /**
   * The run's --max-attempts: `status` judges which errs records are final by it, as that run
   * did (src/frontier/retry-policy.ts isFinal). Absent in files of older versions.
   */
  readonly maxAttempts?: number;
  /**
   * The node was idle when it stopped: its last reseed found nothing, so nothing was left to
   * fetch but retries (a --watch that waited). Absent: it was not, or an older version.
   */
  readonly idle?: boolean;
  /**
   * Of `queued`, the URLs of each host the node crawled when it stopped (host directory ->
   * count). With `departed`, `status` counts a host once when two nodes' ends name it: the
   * node that saw the other leave held it later (src/cli/crawl-state.ts). Absent: older versions.
   */
  readonly byHost?: Readonly<Record<string, number>>;
  /** The nodes this node saw leave while it worked, before it stopped (CrawlNode.endedAs). */
  readonly departed?: readonly string[];
}

/**
 * Each node's own end of run, beside the shared run state: `.mountcrawl-run.<node-id>.json`,
 * written by that node only (no two nodes ever write one file), so that `status` adds up what
 * every node left, not only the last one to end (docs/options.md, `status`).
 */
const NODE_END_PREFIX = '.mountcrawl-run.';

function nodeEndPath(layout: Layout, nodeId: string): string {
  return `${layout.root}/${NODE_END_PREFIX}${nodeId}.json`;
}

/** Writes this node's own end of run (`state.node`), whole. */
export async function writeNodeEnd(layout: Layout, state: RunState): Promise<void> {
  await writeFileAtomic(layout.mount, nodeEndPath(layout, state.node), `${JSON.stringify(state)}\n`, { nodeId: state.node, fsync: false });
}

/** The node ids of the ends of run in the data directory. */
async function nodeEndIds(layout: Layout): Promise<string[]> {
  const names = await layout.fs.readdir(layout.root).catch(() => [] as string[]);
  return names
    .filter((n) => n.startsWith(NODE_END_PREFIX) && n.endsWith('.json') && n !== RUN_STATE_FILE)
    .map((n) => n.slice(NODE_END_PREFIX.length, -5));
}

/** Every node's end of run in the data directory (those that cannot be read are left out). */
export async function readNodeEnds(layout: Layout): Promise<RunState[]> {
  const out: RunState[] = [];
  for (const id of await nodeEndIds(layout)) {
    try {
      out.push(await readJsonValidated(layout.mount, nodeEndPath(layout, id), asRunState));
    } catch {
      // removed meanwhile, or not ours
    }
  }
  return out;
}

/**
 * Removes the ends of run of `nodes` (every node's when `'all'`): a node that starts takes
 * what they left into the crawl again (its reseeds find it on disk), and a node that saw one
 * leave while it worked took the departed node's share over. Best effort.
 */
export async function removeNodeEnds(layout: Layout, nodes: readonly string[] | 'all'): Promise<void> {
  const ids = nodes === 'all' ? await nodeEndIds(layout) : nodes;
  for (const id of ids) await layout.fs.unlink(nodeEndPath(layout, id)).catch(() => undefined);
}

/** The --max-attempts a reader of the data directory judges errs records final by, and where it came from. */
export interface JudgedMaxAttempts {
  readonly value: number;
  readonly from: 'option' | 'last run' | 'default';
}

/**
 * The --max-attempts by which `status` and `report` judge which errs records are final
 * (src/frontier/retry-policy.ts isFinal, as the crawler does): the one `given`, else the last
 * run's (`run`, its run state), else the crawl's default.
 */
export function judgedMaxAttempts(given: number | undefined, run: RunState | undefined): JudgedMaxAttempts {
  if (given !== undefined) return { value: given, from: 'option' };
  if (run?.maxAttempts !== undefined) return { value: run.maxAttempts, from: 'last run' };
  return { value: DEFAULTS.maxAttempts, from: 'default' };
}

function asRunState(value: unknown): RunState {
  const v = value as Partial<RunState> | null;
  if (v === null || typeof v !== 'object' || !['running', 'complete', 'stopped'].includes(String(v.state))) {
    throw new TypeError('not a run state');
  }
  if (v.maxAttempts !== undefined && !(Number.isInteger(v.maxAttempts) && v.maxAttempts >= 1)) {
    const { maxAttempts: _, ...rest } = v;
    return rest as RunState;
  }
  return v as RunState;
}

export function runStatePath(layout: Layout): string {
  return `${layout.root}/${RUN_STATE_FILE}`;
}

/** Writes the run state whole (temp + rename). */
export async function writeRunState(layout: Layout, state: RunState): Promise<void> {
  await writeFileAtomic(layout.mount, runStatePath(layout), `${JSON.stringify(state)}\n`, { nodeId: state.node, fsync: false });
}

/** The last run state, or undefined when no run wrote one (older data directories too). */
export async function readRunState(layout: Layout): Promise<RunState | undefined> {
  try {
    return await readJsonValidated(layout.mount, runStatePath(layout), asRunState);
  } catch {
    return undefined;
  }
}
