import { isDeadLocalProcess } from '../cluster/local-liveness.js';
import { asNodeRecord, type NodeRecord } from '../cluster/node-record.js';
import { names } from '../store/holdings.js';
import type { Layout } from '../store/layout.js';
import { readJsonValidated } from '../store/read-whole.js';

/** A node record as a reading command sees it: alive, dead, or not known (null). */
export type SeenNode = NodeRecord & { alive: boolean | null };

/** Every node record of nodes/ (one listing, one small read each); a record removed meanwhile is left out. */
export async function readNodes(layout: Layout): Promise<NodeRecord[]> {
  const out: NodeRecord[] = [];
  for (const name of await names(layout.dir('nodes'))) {
    if (!name.endsWith('.json')) continue;
    try {
      out.push(await readJsonValidated(`${layout.dir('nodes')}/${name}`, asNodeRecord));
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
