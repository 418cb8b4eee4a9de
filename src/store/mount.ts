import { randomUUID } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { type Clock, systemClock } from '../config/clock.js';
import { tempName } from './temp-names.js';
import { LeftTemps } from './left-temps.js';
import type { MountFs } from './mount-fs.js';
import { nodeMountFs } from './node-mount-fs.js';

/**
 * The data directory's file system as one node uses it: the MountFs, the node's clock (the
 * pauses between rereads of a torn record, the times written into records), its source of
 * random ids (lease tokens, the marker's id) and the temporary files its failed writes left
 * (LeftTemps). A crawl gives every node the real file system (nodeMountFs); a test or a
 * simulation gives several nodes of one process one in-memory mount, each its own Mount.
 */
export class Mount {
  readonly fs: MountFs;
  readonly clock: Clock;
  readonly temps: LeftTemps;
  /**
   * Part of every temporary and hand-off name this Mount makes: a node id can be reused
   * (--node-id, a restart, host name and pid in containers), and a file a killed earlier run
   * left must never have a new file's name (temporary files are created exclusively, a
   * hand-off rename must not replace an unread one). Random on the real file system; with a
   * random source given (a test or a simulation), the clock's time when the Mount was made,
   * so that a run is the same every time without drawing from that source, and a node made
   * again later gets another.
   */
  readonly tag: string;
  readonly #random: (() => number) | undefined;
  #tempSeq = 0;

  constructor(fs: MountFs, clock: Clock, random?: () => number) {
    this.fs = fs;
    this.clock = clock;
    this.temps = new LeftTemps(fs);
    this.#random = random;
    const tag = random === undefined ? Math.floor(Math.random() * 36 ** 6) : Math.floor(clock.now()) % 36 ** 8;
    this.tag = tag.toString(36).padStart(6, '0');
  }

  /** A new temporary name (layout.ts, tempName) for a file named `finalName` written by `nodeId`: never the same twice. */
  nextTempName(finalName: string, nodeId: string): string {
    return tempName(finalName, nodeId, this.tag, this.#tempSeq++);
  }

  /** nextTempName for the file at `path`, in its directory (a temporary file is renamed or linked into place). */
  nextTempPath(path: string, nodeId: string): string {
    return join(dirname(path), this.nextTempName(basename(path), nodeId));
  }

  /**
   * True on the real file system: the fast paths (the callback API of the atomic write and
   * of reads, WriteThread, DirHandles, the reseed's reader threads) are taken only then; they
   * make the same steps as the generic path through `fs`.
   */
  get native(): boolean {
    return this.fs === nodeMountFs;
  }

  /** A new random id (lease tokens, the marker's id): a UUID, or 32 hex digits of the random source given. */
  newId(): string {
    const random = this.#random;
    if (random === undefined) return randomUUID();
    let id = '';
    for (let i = 0; i < 4; i++)
      id += Math.floor(random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0');
    return id;
  }
}

/** The real file system on the real clock: every Layout made without a Mount (the CLI's commands, tests of one part). */
export const nodeMount = new Mount(nodeMountFs, systemClock);
