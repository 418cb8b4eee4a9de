import type { Mount } from '../store/mount.js';

/** What a lease must say to be the one a node means to remove: its holder and token. */
export interface LeaseId {
  readonly node: string;
  readonly token: string;
}

/**
 * Removing a lease only if it is still the one expected (docs/protocol.md, "Who crawls what"):
 * it is renamed to a name of this node's own (one renamer wins), what was moved is read, and
 * put back when it was not the expected one (someone else took the host in between).
 *
 * A rename that fails otherwise than with ENOENT may have happened all the same (a lost reply
 * over a failing mount): the lease would then sit under this node's temporary name, neither a
 * lease nor removed. Such a move is remembered by host and settled before the next release or
 * take of the host (`settle`), when the mount answers again.
 */
export class LeaseAside<L extends LeaseId> {
  readonly #mount: Mount;
  readonly #readAside: (path: string) => Promise<L | undefined>;
  readonly #pending = new Map<string, { path: string; aside: string; expected: L }>();

  /** `readAside`: reads a lease file at any path; undefined when it is absent or not a lease. */
  constructor(mount: Mount, readAside: (path: string) => Promise<L | undefined>) {
    this.#mount = mount;
    this.#readAside = readAside;
  }

  /** Removes the lease at `path` (of host `hostDir`) if it is `expected`; true when it did. Throws what the rename throws but ENOENT. */
  async removeIfUnchanged(hostDir: string, path: string, expected: L, nodeId: string): Promise<boolean> {
    const aside = this.#mount.nextTempPath(path, nodeId);
    try {
      await this.#mount.fs.rename(path, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      this.#pending.set(hostDir, { path, aside, expected });
      throw err;
    }
    return this.#judge(path, aside, expected);
  }

  /**
   * A move aside of host `hostDir`'s lease whose rename failed: undefined when there is none,
   * or when the rename did not happen (the lease, if any, is where it was); else as
   * removeIfUnchanged. Throws what the mount throws (the move stays remembered).
   */
  async settle(hostDir: string): Promise<boolean | undefined> {
    const p = this.#pending.get(hostDir);
    if (p === undefined) return undefined;
    const moved = await this.#mount.fs.stat(p.aside).then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return false;
        throw err;
      },
    );
    this.#pending.delete(hostDir);
    return moved ? this.#judge(p.path, p.aside, p.expected) : undefined;
  }

  async #judge(path: string, aside: string, expected: L): Promise<boolean> {
    const moved = await this.#readAside(aside).catch(() => undefined);
    if (moved !== undefined && (moved.node !== expected.node || moved.token !== expected.token)) {
      await this.#mount.fs.link(aside, path).catch(() => undefined); // restore a lease that was not the stale one
      await this.#mount.temps.remove(aside);
      return false;
    }
    await this.#mount.temps.remove(aside);
    return true;
  }
}
