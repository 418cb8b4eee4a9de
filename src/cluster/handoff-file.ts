import { hostDirOfNormalized, isSafeHostDir } from '../url/host-dir.js';

/** A link in a hand-off: its URL, depth, and the URL of the page it was found on, if known. */
export type HandoffLink = readonly [string, number] | readonly [string, number, string];

/** Version of the hand-off file format. */
export const HANDOFF_VERSION = 1;

/**
 * One hand-off file (docs/protocol.md, "Hand-offs"): links that a node found on pages it
 * committed, for hosts another node owns, grouped by host directory. Written whole (temp +
 * rename) into `handoff/<owner>/`, read and removed by that owner. A hint, never the truth:
 * every link in it is also in a links record on the mount.
 */
export interface HandoffFile {
  readonly v: number;
  /** The writer's node id (for people; nothing depends on it). */
  readonly from: string;
  /** The owner it was meant for, by the writer's view of the live nodes. */
  readonly to: string;
  /** Writer's wall clock, ms (for people; never compared with another clock). */
  readonly at: number;
  /**
   * host directory -> [normalized URL, depth, referrer?][]: the referrer is the URL of the page
   * that linked to it (its depth is one less), when the writer knew it (docs/protocol.md).
   */
  readonly links: Readonly<Record<string, readonly HandoffLink[]>>;
  /**
   * Hosts the writer lends to `to` (docs/protocol.md, "Lending hosts"), as its records say
   * from record `counter` on (its next record when it lent them).
   */
  readonly lent?: { readonly counter: number; readonly hosts: readonly string[] };
}

/**
 * The name of a writer's `seq`-th hand-off: the writer's id, the tag of its Mount and a
 * sequence number, so that no two writers (nor two runs of one node id) ever choose the same
 * name, and a rename never replaces another writer's unread hand-off.
 */
export function handoffName(writer: string, tag: string, seq: number): string {
  return `${writer}+${tag}${seq.toString(36)}.json`;
}

/** True for a published hand-off (not a temporary file, nothing else). */
export function isHandoffName(name: string): boolean {
  return !name.startsWith('.') && name.endsWith('.json') && name.includes('+');
}

/**
 * Checks a parsed hand-off and keeps only what is safe to act on: host directories that pass
 * `isSafeHostDir`, and URLs that belong to the host they are listed under. Throws TypeError
 * when the file is not a hand-off at all (a torn read is retried by the caller).
 */
export function asHandoff(value: unknown): HandoffFile {
  const o = value as Partial<HandoffFile> | null;
  if (o === null || typeof o !== 'object' || o.v !== HANDOFF_VERSION || typeof o.links !== 'object' || o.links === null) {
    throw new TypeError('not a hand-off file');
  }
  const links: Record<string, HandoffLink[]> = {};
  for (const [hostDir, list] of Object.entries(o.links)) {
    if (!isSafeHostDir(hostDir) || !Array.isArray(list)) continue;
    const kept: HandoffLink[] = [];
    for (const item of list) {
      if (!Array.isArray(item) || typeof item[0] !== 'string' || typeof item[1] !== 'number') continue;
      if (hostDirOfNormalized(item[0]) !== hostDir) continue;
      kept.push(typeof item[2] === 'string' ? [item[0], item[1], item[2]] : [item[0], item[1]]);
    }
    links[hostDir] = kept;
  }
  const lent = asLent(o.lent);
  return { v: HANDOFF_VERSION, from: String(o.from), to: String(o.to), at: Number(o.at), links, ...(lent && { lent }) };
}

function asLent(value: unknown): HandoffFile['lent'] {
  const l = value as { counter?: unknown; hosts?: unknown } | null | undefined;
  if (l === null || typeof l !== 'object' || typeof l.counter !== 'number' || !Array.isArray(l.hosts)) return undefined;
  const hosts = l.hosts.filter((h): h is string => typeof h === 'string' && isSafeHostDir(h));
  return hosts.length === 0 ? undefined : { counter: l.counter, hosts };
}
