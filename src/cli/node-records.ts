import { isDeadLocalProcess } from '../cluster/local-liveness.js';
import { asNodeRecord, type NodeRecord } from '../cluster/node-record.js';
import { names } from '../store/holdings.js';
import type { Layout } from '../store/layout.js';
import { readJsonValidated } from '../store/read-record.js';

/** A node record as a reading command sees it: alive, dead, or not known (null). */
export type SeenNode = NodeRecord & { alive: boolean | null };

/** Every node record of nodes/ (one listing, one small read each); a record removed meanwhile is left out. */
export async function readNodes(layout: Layout): Promise<NodeRecord[]> {
  const out: NodeRecord[] = [];
  for (const name of await names(layout.dir('nodes'), layout.fs)) {
    if (!name.endsWith('.json')) continue;
    try {
      out.push(await readJsonValidated(layout.mount, `${layout.dir('nodes')}/${name}`, asNodeRecord));
    } catch {
      // vanished between listing and reading
    }
  }
  return out;
}

/**
 * The nodes of a data directory and which are alive. With `wait`, the records are read twice,
 * a heartbeat and a half apart: a node is alive when its counter moved (the rule nodes use;
 * clocks are not compared, docs/protocol.md "Nodes and liveness"). Without it, aliveness is
 * unknown (null) except for processes of this machine and nodes that left done.
 */
export async function seeNodes(layout: Layout, wait: boolean): Promise<SeenNode[]> {
  const first = await readNodes(layout);
  if (!wait || first.length === 0) {
    return first.map((n) => ({ ...n, alive: isDeadLocalProcess(n) || n.state === 'done' ? false : null }));
  }
  const pause = Math.min(5_000, Math.max(...first.map((n) => n.heartbeatMs ?? 1_000)) * 1.5 + 200);
  await new Promise((resolve) => setTimeout(resolve, pause));
  const second = new Map((await readNodes(layout)).map((n) => [n.id, n]));
  return first.map((n) => {
    const later = second.get(n.id);
    return {
      ...(later ?? n),
      alive: later !== undefined && later.counter !== n.counter && later.state !== 'done' && !isDeadLocalProcess(later),
    };
  });
}

/**
 * The ids of the nodes other than `self` that may be running, asked before a new run changes
 * the crawl's settings: nodes/ is read twice, a heartbeat and a half apart (1.7 s when no
 * record says its heartbeat), and a node counts when its counter moved or its record appeared
 * in between (a node that has just started).
 */
export async function othersAlive(layout: Layout, self: string): Promise<string[]> {
  const records = await readNodes(layout);
  const first = new Map(records.map((n) => [n.id, n.counter]));
  const beat = records.length === 0 ? 1_000 : Math.max(...records.map((n) => n.heartbeatMs ?? 1_000));
  await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, beat * 1.5 + 200)));
  return (await readNodes(layout))
    .filter((n) => n.id !== self && n.state !== 'done' && !isDeadLocalProcess(n) && first.get(n.id) !== n.counter)
    .map((n) => n.id);
}
