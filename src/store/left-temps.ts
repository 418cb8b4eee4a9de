import type { MountFs } from './mount-fs.js';

/**
 * Temporary files of failed writes that could not be removed then (the mount was failing):
 * removeLeft() tries again once the mount is back, so that a fault leaves no litter
 * (docs/protocol.md, "Faults of the mount"). One per node (Mount): nodes that share a process
 * each clean up their own.
 */
export class LeftTemps {
  readonly #fs: MountFs;
  readonly #left = new Set<string>();

  constructor(fs: MountFs) {
    this.#fs = fs;
  }

  /**
   * Remembers a temporary file that may exist on the server although the call that made it
   * failed (an open whose reply was lost): removeLeft() removes it once the mount is back.
   */
  remember(tmp: string): void {
    this.#left.add(tmp);
  }

  /**
   * Removes the temporary file of a write that failed or is done with it. When the mount
   * refuses (it is failing), the file is remembered and removed by removeLeft() later.
   */
  async remove(tmp: string): Promise<void> {
    if (!(await this.#unlinked(tmp))) this.#left.add(tmp);
  }

  /** Removes the temporary files failed writes left behind; returns how many are still there. */
  async removeLeft(): Promise<number> {
    for (const tmp of [...this.#left]) if (await this.#unlinked(tmp)) this.#left.delete(tmp);
    return this.#left.size;
  }

  /** Unlinks `tmp`; true when it is gone (removed now, or not there). */
  #unlinked(tmp: string): Promise<boolean> {
    return this.#fs.unlink(tmp).then(
      () => true,
      (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
    );
  }
}
