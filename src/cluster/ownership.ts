import type { Partition } from '../config/crawl-config.js';
import { candidate, ownerOf, type Candidate } from './rendezvous.js';

/**
 * Who crawls what (docs/protocol.md, "Who crawls what"): with `--partition host` (default) a host belongs to the
 * rendezvous winner over the live nodes for its host directory; with `--partition url` each
 * URL belongs to the winner for its key (and every node may write into every host's
 * directories). Owners of hosts are cached until the live set changes.
 */
export class Ownership {
  readonly #self: string;
  readonly #partition: Partition;
  #nodes: Candidate[];
  #key = '';
  readonly #hostOwner = new Map<string, string>();

  constructor(self: string, partition: Partition) {
    this.#self = self;
    this.#partition = partition;
    this.#nodes = [candidate(self)];
    this.#key = self;
  }

  get partition(): Partition {
    return this.#partition;
  }

  get liveCount(): number {
    return this.#nodes.length;
  }

  /** Sets the live nodes (this one must be among them); true when the set changed. */
  setLive(ids: readonly string[]): boolean {
    const key = [...ids].sort().join('\n');
    if (key === this.#key) return false;
    this.#key = key;
    this.#nodes = ids.map(candidate);
    this.#hostOwner.clear();
    return true;
  }

  /** The node that owns a host (host partitioning). */
  hostOwner(hostDir: string): string {
    let owner = this.#hostOwner.get(hostDir);
    if (owner === undefined) {
      owner = ownerOf(hostDir, this.#nodes) ?? this.#self;
      this.#hostOwner.set(hostDir, owner);
    }
    return owner;
  }

  /** True when this node crawls the host (always, with URL partitioning). */
  ownsHost(hostDir: string): boolean {
    return this.#partition === 'url' || this.hostOwner(hostDir) === this.#self;
  }

  /** True when this node crawls the URL with this key on this host. */
  ownsUrl(hostDir: string, key: string): boolean {
    if (this.#partition === 'host') return this.hostOwner(hostDir) === this.#self;
    return this.#nodes.length === 1 || ownerOf(key, this.#nodes) === this.#self;
  }
}
