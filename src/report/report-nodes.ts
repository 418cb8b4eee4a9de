import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeadLocalProcess } from '../cluster/local-liveness.js';
import { asNodeRecord, type NodeRecord } from '../cluster/node-record.js';
import { names } from '../store/holdings.js';
import type { Layout } from '../store/layout.js';
import { readJsonValidated } from '../store/read-record.js';
import { mapLimit } from '../util/map-limit.js';
import { nodeOfName } from '../warc/dead-writer-repair.js';
import { writerOf } from '../warc/warc-repair.js';

/** One row of the nodes table. */
export interface NodeRow {
  readonly id: string;
  /** The state its record says, or `exited` when it has none (a node removes its record when it ends). */
  readonly state: string;
  /** The machine: from its record, else from the warcinfo record of its first WARC file; null when neither says. */
  readonly hostname: string | null;
  /** Pages per second at its last heartbeat; null for a node that exited (it crawls no more). */
  readonly rate: number | null;
  /** Pages in links records written by this node. */
  readonly pages: number;
  /** When it was last seen: its last heartbeat, or for a node that exited the last page it fetched. */
  readonly lastSeen: string | null;
  readonly lastSeenFrom: 'heartbeat' | 'last page' | null;
  /** false: a process of this machine that no longer runs; null: unknown from here. */
  readonly alive: boolean | null;
}

/** One WARC file of the data directory (docs/warc.md). */
export interface WarcFileRow {
  readonly name: string;
  readonly bytes: number;
  /** Still being written (`.open`), or its writer died and no node has closed it yet. */
  readonly open: boolean;
}

/** What the links records say of one node: its pages and the time of the last. */
export interface NodePages {
  pages: number;
  lastMs: number;
}

/** Files read at once: enough to keep a network mount busy, few enough for the fd limit. */
const PARALLEL_READS = 64;

/** The WARC files of `warc/`, by name, with their sizes. */
export async function warcFiles(layout: Layout): Promise<WarcFileRow[]> {
  const files: WarcFileRow[] = [];
  await mapLimit(
    (await names(layout.warc())).filter((n) => /\.warc\.gz(\.open)?$/.test(n)),
    PARALLEL_READS,
    async (name) => {
      const bytes = await stat(join(layout.warc(), name)).then(
        (s) => s.size,
        () => 0,
      );
      files.push({ name, bytes, open: name.endsWith('.open') });
    },
  );
  return files.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * The nodes: those with a record (alive, or dead and not yet removed) and those the links
 * records name without one (they exited), with the machine of each from its WARC files'
 * warcinfo when its record is gone, and the last page it fetched.
 */
export async function nodeRows(
  layout: Layout,
  pagesByNode: ReadonlyMap<string, NodePages>,
  warc: readonly WarcFileRow[],
): Promise<NodeRow[]> {
  const rows: NodeRow[] = (await readNodes(layout)).map((n) => ({
    id: n.id,
    state: n.state,
    hostname: n.hostname,
    rate: n.rate,
    pages: pagesByNode.get(n.id)?.pages ?? 0,
    lastSeen: n.updatedAt,
    lastSeenFrom: 'heartbeat',
    alive: isDeadLocalProcess(n) ? false : null,
  }));
  const exited = [...pagesByNode.keys()].filter((id) => !rows.some((r) => r.id === id));
  const firstWarc = new Map<string, string>();
  for (const f of warc) {
    const node = nodeOfName(f.name);
    if (node !== undefined && exited.includes(node) && !firstWarc.has(node)) firstWarc.set(node, f.name);
  }
  await mapLimit(exited, PARALLEL_READS, async (id) => {
    const { pages, lastMs } = pagesByNode.get(id)!;
    const file = firstWarc.get(id);
    const info = file === undefined ? undefined : await writerOf(join(layout.warc(), file)).catch(() => undefined);
    rows.push({
      id,
      state: 'exited',
      hostname: info?.hostname || null,
      rate: null,
      pages,
      lastSeen: Number.isFinite(lastMs) ? new Date(lastMs).toISOString() : null,
      lastSeenFrom: Number.isFinite(lastMs) ? 'last page' : null,
      alive: null,
    });
  });
  return rows.sort((a, b) => b.pages - a.pages || a.id.localeCompare(b.id));
}

async function readNodes(layout: Layout): Promise<NodeRecord[]> {
  const out: NodeRecord[] = [];
  await mapLimit(
    (await names(layout.dir('nodes'))).filter((n) => n.endsWith('.json')),
    PARALLEL_READS,
    async (name) => {
      const r = await readJsonValidated(layout.mount, `${layout.dir('nodes')}/${name}`, asNodeRecord).catch(() => undefined);
      if (r !== undefined) out.push(r);
    },
  );
  return out;
}
