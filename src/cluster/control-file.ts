import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic-write.js';
import type { Mount } from '../store/mount.js';
import { readRecord } from '../store/read-record.js';

/** The crawl's control file (docs/protocol.md, "The control file"): what `stop`, `pause`, `resume` and `drain` asked. */
export const CONTROL_FILE = '.mountcrawl-control.json';

/** Who gave an order, and when (wall time, for people). */
export interface Given {
  /** The file's `seq` when it was given. */
  readonly seq: number;
  readonly at: string;
  readonly by: string;
}

/** What the control file holds. */
export interface ControlRecord {
  readonly format: 1;
  /** One more at every command: a node acts only on orders given after it started (`seq` above the one it read first). */
  readonly seq: number;
  /** Set while the crawl is paused: running nodes send no request, starting nodes start paused. */
  readonly paused?: Given;
  /** The last `stop`: every node that started before it stops. */
  readonly stop?: Given;
  /** `drain NODE`, one entry a node still named in nodes/ when the file was last written. */
  readonly drain: readonly (Given & { readonly node: string })[];
}

/** What a running node is asked to do now. */
export type Order = 'run' | 'pause' | 'stop' | 'drain';

export function controlPath(root: string): string {
  return join(root, CONTROL_FILE);
}

function asControlRecord(value: unknown): ControlRecord {
  const r = value as Partial<ControlRecord> | null;
  if (r === null || typeof r !== 'object' || r.format !== 1 || typeof r.seq !== 'number' || !Array.isArray(r.drain)) {
    throw new TypeError('not a control record');
  }
  return r as ControlRecord;
}

/**
 * The control file, `absent` when no command was ever given, or `torn` when it does not parse
 * (not a file of ours: a node ignores it, a command refuses it). Errors of the mount are thrown.
 */
export async function readControl(mount: Mount, root: string): Promise<ControlRecord | 'absent' | 'torn'> {
  const read = await readRecord(mount, controlPath(root), asControlRecord);
  return read.kind === 'value' ? read.value : read.kind;
}

/** Writes the control file whole (docs/protocol.md, invariant 1). */
export function writeControl(mount: Mount, root: string, record: ControlRecord, writer: string): Promise<void> {
  return writeFileAtomic(mount, controlPath(root), `${JSON.stringify(record, null, 1)}\n`, { nodeId: writer, fsync: false });
}

/**
 * What node `nodeId`, which read `since` as the file's `seq` when it started, must do by
 * `record`: a drain of it or a stop given after it started ends it (drain first: it names the
 * node), a pause holds it; anything given before it started but the pause is not for it.
 */
export function orderFor(record: ControlRecord | undefined, nodeId: string, since: number): Order {
  if (record === undefined) return 'run';
  if (record.drain.some((d) => d.node === nodeId && d.seq > since)) return 'drain';
  if (record.stop !== undefined && record.stop.seq > since) return 'stop';
  return record.paused !== undefined ? 'pause' : 'run';
}
