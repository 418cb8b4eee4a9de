import { hostname } from 'node:os';
import { type ControlRecord, type Given, controlPath, readControl, writeControl } from '../cluster/control-file.js';
import type { NodeRecord } from '../cluster/node-record.js';
import { defaultNodeId } from '../config/parse-values.js';
import { ExitCode, FatalError } from '../errors.js';
import { openExistingDataDir, readMarker } from '../store/data-dir.js';
import type { Layout } from '../store/layout.js';
import { plural } from '../util/plural.js';
import { isDeadLocalProcess } from '../cluster/local-liveness.js';
import { readNodes } from './node-records.js';

/** The commands that write the control file (docs/operations.md, "Stopping, pausing, draining"). */
export type ControlVerb = 'stop' | 'pause' | 'resume' | 'drain';

/** The control file when no command was ever given. */
const NONE: ControlRecord = { format: 1, seq: 0, drain: [] };

/** The crawl of a data directory and its control file: NO_CRAWL when no crawl was ever started on it. */
export async function openCrawl(dataDir: string): Promise<{ layout: Layout; control: ControlRecord }> {
  const layout = await openExistingDataDir(dataDir);
  if ((await readMarker(layout)) === undefined) {
    throw new FatalError('NO_CRAWL', `no crawl in ${dataDir}: no mountcrawl crawl was started on it (check --data)`, ExitCode.USAGE);
  }
  const read = await readControl(layout.mount, layout.root);
  if (read === 'torn') throw new FatalError('DATA_DIR_UNUSABLE', `${controlPath(layout.root)} is not a control file`, ExitCode.DATA_DIR);
  return { layout, control: read === 'absent' ? NONE : read };
}

/**
 * `mountcrawl stop | pause | resume | drain NODE`: writes the next revision of the control file
 * whole; every running node reads it at its next heartbeat. Then reports what the nodes will
 * do, after watching their heartbeats for a heartbeat and a half, a second at least (which of them run). Bad
 * input (no crawl, an unknown node) is one line and exit 2; two commands given at the same
 * moment on two machines: the last one written wins (status shows what is in force).
 */
export async function controlCommand(
  verb: ControlVerb,
  dataDir: string,
  node: string | undefined,
  out: (line: string) => void,
): Promise<number> {
  const { layout, control } = await openCrawl(dataDir);
  const records = await readNodes(layout);
  if (verb === 'pause' && control.paused !== undefined) {
    out(`paused already (by ${control.paused.by} at ${control.paused.at}): mountcrawl resume to go on`);
    return ExitCode.OK;
  }
  if (verb === 'resume' && control.paused === undefined) {
    out('not paused: nothing to resume');
    return ExitCode.OK;
  }
  if (verb === 'drain') refuseUnknown(node!, records, dataDir);
  const by = defaultNodeId(hostname(), process.pid);
  const given: Given = { seq: control.seq + 1, at: new Date().toISOString(), by };
  // Drains of nodes that have left (no record) are done with.
  const named = new Set(records.map((r) => r.id));
  const drain = control.drain.filter((d) => named.has(d.node));
  const { paused: _paused, ...rest } = control;
  const next: ControlRecord =
    verb === 'pause'
      ? { ...rest, seq: given.seq, paused: given, drain }
      : verb === 'drain'
        ? { ...control, seq: given.seq, drain: [...drain.filter((d) => d.node !== node), { ...given, node: node! }] }
        : // A stop ends the pause too: the next crawl starts crawling.
          { ...rest, seq: given.seq, ...(verb === 'stop' ? { stop: given } : {}), drain };
  await writeControl(layout.mount, layout.root, next, by);
  out(reply(verb, await running(layout, records), node));
  return ExitCode.OK;
}

/**
 * The nodes of `before` (nodes/ as read before the command wrote) that run: read again a
 * heartbeat and a half later, a node runs when its counter moved or its record is gone (it
 * acted on the command already and left). Clocks are not compared (docs/protocol.md, "Nodes and liveness").
 */
async function running(layout: Layout, before: readonly NodeRecord[]): Promise<NodeRecord[]> {
  const candidates = before.filter((n) => n.state !== 'done' && !isDeadLocalProcess(n));
  if (candidates.length === 0) return [];
  const beat = Math.max(...candidates.map((n) => n.heartbeatMs ?? 1_000));
  // A second at least: a node of a short --heartbeat on a busy machine may miss a beat or two.
  await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, Math.max(1_000, beat * 1.5 + 200))));
  const after = new Map((await readNodes(layout)).map((n) => [n.id, n]));
  return candidates.filter((n) => after.get(n.id)?.counter !== n.counter);
}

/** UNKNOWN_NODE (exit 2) when `node` has no record in nodes/, or left done. */
function refuseUnknown(node: string, records: readonly NodeRecord[], dataDir: string): void {
  const record = records.find((r) => r.id === node);
  if (record !== undefined && record.state !== 'done') return;
  const ids = records.filter((r) => r.state !== 'done').map((r) => r.id);
  const known = ids.length === 0 ? 'no node runs' : `its nodes: ${ids.sort().join(', ')}`;
  const why = record === undefined ? `no node ${node} in ${dataDir}/nodes` : `${node} has left the crawl already (done)`;
  throw new FatalError('UNKNOWN_NODE', `${why} (${known})`, ExitCode.USAGE);
}

/** The command's one line: what it wrote and what the nodes running now will do. */
function reply(verb: ControlVerb, alive: readonly NodeRecord[], node: string | undefined): string {
  const running = alive.length === 0 ? 'no node of the crawl runs now' : `${plural(alive.length, 'running node')}`;
  const verbOf = (one: string, many: string): string => (alive.length === 1 ? one : many);
  switch (verb) {
    case 'stop':
      return alive.length === 0
        ? `stop: ${running}; a node cut off from the mount stops when it reaches it again, a crawl started from now on is not stopped`
        : `stop: ${running} ${verbOf('stops', 'stop')} within a heartbeat, after ${verbOf('its', 'their')} requests in flight, and ${verbOf('exits', 'exit')} 0; mountcrawl crawl resumes`;
    case 'pause':
      return `paused: ${alive.length === 0 ? running : `${running} ${verbOf('sends', 'send')} no request from their next heartbeat`}; nodes started while paused start paused; mountcrawl resume to go on`;
    case 'resume':
      return `resumed: ${alive.length === 0 ? running : `${running} ${verbOf('goes', 'go')} on within a heartbeat`}`;
    case 'drain': {
      if (alive.some((n) => n.id === node)) {
        const others = alive.length - 1;
        return `drain ${node}: it stops within a heartbeat, after its requests in flight, and exits 0; ${others === 0 ? 'no other node runs to take its hosts' : `${plural(others, 'other node')} ${others === 1 ? 'takes' : 'take'} its hosts`}`;
      }
      return `drain ${node}: ${node} is not running (its heartbeat did not move): the others take its hosts once they count it dead (--dead-after); if it reaches the mount again it leaves at once; started again, it crawls`;
    }
  }
}

/** Lines for `status` and `status --watch` about what the control file asks now (none when nothing). */
export function controlLines(control: ControlRecord, records: readonly NodeRecord[]): string[] {
  const lines: string[] = [];
  if (control.paused !== undefined) lines.push(`paused since ${control.paused.at} (by ${control.paused.by}): mountcrawl resume to go on`);
  const stopping = records.filter((r) => r.state === 'stopping').length;
  if (control.stop !== undefined && stopping > 0)
    lines.push(`stop given at ${control.stop.at} (by ${control.stop.by}): ${plural(stopping, 'node')} stopping`);
  const named = new Map(records.map((r) => [r.id, r]));
  for (const d of control.drain) {
    const r = named.get(d.node);
    if (r !== undefined && r.state !== 'done') lines.push(`drain ${d.node} given at ${d.at} (by ${d.by}): its record says ${r.state}`);
  }
  return lines;
}
