/**
 * Distinct hosts across the nodes of one `--processes` supervisor, for the live total line.
 * Adding up each node's count of hosts owned counts a host twice while it passes from one node
 * to another, and once per node under `--partition url` (every node works on every host); the
 * total line counts each host once, as the end line does (src/store/holdings.ts).
 *
 * A node sends the directory names of the hosts it owns only when they changed since its last
 * message (onlyWhenChanged), so a steady crawl of many hosts costs nothing per tick.
 */
export class HostTally {
  readonly #bySlot = new Map<number, ReadonlySet<string>>();

  /** The hosts node `slot` owns now (replaces what it said before). */
  set(slot: number, hosts: readonly string[]): void {
    this.#bySlot.set(slot, new Set(hosts));
  }

  /** Forgets a node (it exited or is restarting). */
  forget(slot: number): void {
    this.#bySlot.delete(slot);
  }

  /** True once any node has said which hosts it owns. */
  get known(): boolean {
    return this.#bySlot.size > 0;
  }

  /** Hosts owned by at least one node, each counted once. */
  get count(): number {
    if (this.#bySlot.size === 1) return [...this.#bySlot.values()][0]!.size;
    const all = new Set<string>();
    for (const hosts of this.#bySlot.values()) for (const h of hosts) all.add(h);
    return all.size;
  }
}

/**
 * A filter for a node's messages: returns the sorted host list when it differs from the one
 * returned last, undefined when it is the same (the supervisor keeps the last one).
 */
export function onlyWhenChanged(): (hosts: readonly string[]) => string[] | undefined {
  let last: string | undefined;
  return (hosts) => {
    const sorted = [...hosts].sort();
    const key = sorted.join('\n');
    if (key === last) return undefined;
    last = key;
    return sorted;
  };
}
