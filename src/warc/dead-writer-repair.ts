import { readdir, rename } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { bootId, isDeadLocalProcess } from '../cluster/local-liveness.js';
import { describeError } from '../errors.js';
import { OPEN_SUFFIX, repairWarc, writerOf, type WarcWriterInfo } from './warc-repair.js';

/** What a node knows of the others' heartbeats (the Membership, docs/protocol.md "Nodes and liveness"). */
export interface WriterLiveness {
  /** True when node `id` is not alive: its record is gone or its counter stopped for --dead-after. */
  isGone(nodeId: string): boolean;
  /** The record of live node `id` (which process runs under that id now), if any. */
  recordOf(nodeId: string): { hostname: string; bootId: string; pid: number } | undefined;
}

/** A `.open` file, once claimed for repair: `.<final name>~repair~<node id of the repairer>`. */
const CLAIM = '~repair~';

export function claimNameOf(finalName: string, repairer: string): string {
  return `.${finalName}${CLAIM}${repairer}`;
}

/** The final name and the repairer of a claim name, undefined for any other name. */
export function parseClaim(name: string): { finalName: string; repairer: string } | undefined {
  if (!name.startsWith('.')) return undefined;
  const at = name.indexOf(CLAIM);
  if (at < 0) return undefined;
  const finalName = name.slice(1, at);
  if (!finalName.endsWith('.warc.gz')) return undefined;
  return { finalName, repairer: name.slice(at + CLAIM.length) };
}

/** The node id in a WARC file's name (`<17-digit time>-<node>-<seq>.warc.gz[.open]`). */
export function nodeOfName(name: string): string | undefined {
  return /^\d{17}-(.+)-\d{5,}\.warc\.gz(?:\.open)?$/.exec(name)?.[1];
}

function sameProcess(a: { hostname: string; bootId: string; pid: number }, b: { hostname: string; bootId: string; pid: number }): boolean {
  return a.hostname === b.hostname && a.bootId === b.bootId && a.pid === b.pid;
}

/**
 * True when the process that wrote a WARC file is dead (docs/warc.md, "Crash safety"):
 * - a process of this machine that no longer runs (at once);
 * - an earlier process with this node's own id (a node id is run by one process at a time);
 * - a node whose heartbeat is gone or stale past --dead-after, on any machine;
 * - a node id now heartbeating from another process (the writer was an earlier run of it).
 * In doubt (no liveness yet, or a live record of that very process) it is alive.
 */
export function writerIsDead(w: WarcWriterInfo, selfId: string, liveness: WriterLiveness | undefined): boolean {
  if (isDeadLocalProcess(w)) return true;
  if (w.node === selfId) return !sameProcess(w, { hostname: hostname(), bootId: bootId(), pid: process.pid });
  if (liveness === undefined) return false;
  if (liveness.isGone(w.node)) return true;
  const now = liveness.recordOf(w.node);
  return now !== undefined && !sameProcess(now, w);
}

/** Claims this process holds right now (so that a second sweep of it does not take them). */
const claiming = new Set<string>();

export interface RepairReport {
  readonly name: string;
  readonly writer: string;
  readonly records: number;
  readonly cut: number;
}

/**
 * Closes the WARC files of `dir` whose writer is dead, from any machine (docs/warc.md,
 * "Crash safety"). A file is first claimed by renaming it to a claim name that carries the
 * repairer's id: rename is exclusive, so of two repairers one wins and the other gets ENOENT
 * and leaves it; and a writer that was only slow finds its file gone at its next write and
 * goes on in a new file (warc-capture.ts). The claimed file is cut after its last complete
 * exchange, its CDXJ written again from its records, and renamed to its final name. A claim
 * whose repairer died is claimed again the same way. Never throws for a file another node
 * took first; returns what it repaired.
 */
export async function repairDeadWarcs(dir: string, selfId: string, liveness: WriterLiveness | undefined): Promise<RepairReport[]> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const done: RepairReport[] = [];
  for (const name of names.sort()) {
    let finalName: string;
    let writer: string;
    if (name.endsWith(`.warc.gz${OPEN_SUFFIX}`) && !name.startsWith('.')) {
      finalName = name.slice(0, -OPEN_SUFFIX.length);
      const info = await writerOf(join(dir, name)).catch(() => undefined);
      if (info !== undefined) {
        if (!writerIsDead(info, selfId, liveness)) continue;
        writer = info.node;
      } else {
        // No readable warcinfo: the writer died creating the file, or is creating it now.
        const node = nodeOfName(name);
        if (node === undefined || node === selfId || liveness === undefined || !liveness.isGone(node)) continue;
        writer = node;
      }
    } else {
      const claim = parseClaim(name);
      if (claim === undefined || claiming.has(join(dir, name))) continue;
      // A repairer that died mid-repair (an earlier run of this id, or a node now gone).
      if (claim.repairer !== selfId && (liveness === undefined || !liveness.isGone(claim.repairer))) continue;
      finalName = claim.finalName;
      writer = nodeOfName(finalName) ?? '?';
    }
    const claimed = claimNameOf(finalName, selfId);
    const key = join(dir, claimed);
    if (claiming.has(key)) continue;
    claiming.add(key);
    try {
      if (name !== claimed) await rename(join(dir, name), key);
      const r = await repairWarc(dir, claimed, finalName, selfId);
      done.push({ name: finalName, writer, records: r.records, cut: r.cut });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // ENOENT: another node claimed it first
    } finally {
      claiming.delete(key);
    }
  }
  return done;
}

/** The warning line of one repair. */
export function repairLine(r: RepairReport): string {
  return (
    `warc: closed ${r.name} left open by node ${r.writer}: ${r.records} records kept` +
    (r.cut > 0 ? `, a torn last record of ${r.cut} bytes cut off` : '')
  );
}

/**
 * Runs repairDeadWarcs in the background every `everyTicks` heartbeats (about every half
 * --dead-after), one sweep at a time: a node of any machine, with or without --warc, closes
 * the files of writers whose heartbeat it saw die. A failed sweep is one warning; the next
 * one tries again.
 */
export class DeadWarcSweeper {
  readonly #o: { dir: string; selfId: string; liveness: WriterLiveness; log: { warn(message: string): void }; everyTicks: number };
  #ticks = 0;
  #running: Promise<void> | undefined;

  constructor(options: {
    dir: string;
    selfId: string;
    liveness: WriterLiveness;
    log: { warn(message: string): void };
    everyTicks: number;
  }) {
    this.#o = options;
  }

  /** Called at each heartbeat, after the others' records were read. */
  tick(): void {
    const o = this.#o;
    if (this.#ticks++ % o.everyTicks !== 0 || this.#running !== undefined) return;
    this.#running = repairDeadWarcs(o.dir, o.selfId, o.liveness)
      .then((done) => {
        for (const r of done) o.log.warn(repairLine(r));
      })
      .catch((err: unknown) => o.log.warn(`warc: closing dead writers' files failed (tried again later): ${describeError(err)}`))
      .finally(() => {
        this.#running = undefined;
      });
  }

  /** Waits for a sweep in progress. */
  async close(): Promise<void> {
    await this.#running;
  }
}
