import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SpillFile } from './spill-file.js';

const PREFIX = 'mountcrawl-spill-';

/**
 * The directory of one node's spill files (docs/protocol.md, "Memory"):
 * `<--spill-dir>/mountcrawl-spill-<pid>-<random>/<n>.jsonl`, made at the first spill and
 * removed when the node stops. A node killed leaves its directory behind; the next node of
 * this machine that spills removes those whose process no longer runs. Nothing in it is read
 * after a restart: the mount's records are the truth.
 */
export class SpillRoom {
  readonly #root: string;
  #dir: string | undefined;
  #next = 0;
  readonly #open = new Set<SpillFile>();

  /** `root`: the directory to make this node's directory in (--spill-dir, the OS's temporary directory by default). */
  constructor(root: string) {
    this.#root = root;
  }

  /** A new, empty spill file (its file is made at its first write). */
  file(): SpillFile {
    if (this.#dir === undefined) {
      sweepDead(this.#root);
      this.#dir = mkdtempSync(join(this.#root, `${PREFIX}${process.pid}-`));
    }
    const file = new SpillFile(join(this.#dir, `${this.#next++}.jsonl`), () => this.#open.delete(file));
    this.#open.add(file);
    return file;
  }

  /** Spill files not closed yet. */
  get openFiles(): number {
    return this.#open.size;
  }

  /** Closes every file and removes the directory (the node stops). */
  close(): void {
    for (const f of [...this.#open]) f.close();
    if (this.#dir !== undefined) rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
  }
}

/** Removes the spill directories of processes of this machine that no longer run. */
function sweepDead(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || running(pid)) continue;
    rmSync(join(root, name), { recursive: true, force: true });
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
