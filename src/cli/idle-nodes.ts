/** A node of --processes that fetched nothing and failed nothing, for idleNodesLines. */
export interface IdleNode {
  /** 0-based. */
  readonly index: number;
  /** The most hosts it owned at once; undefined when it did not say. */
  readonly hostsOwnedMost: number | undefined;
}

/**
 * The end lines that say why nodes fetched nothing (under host partitioning): the crawl was
 * already complete (every node fetched nothing, the data directory holds pages), its hosts had
 * nothing left to fetch, or it owned no host at all (rendezvous hashing gave them to others).
 */
export function idleNodesLines(idle: readonly IdleNode[], all: { nodes: number; pages: number; hosts: number }): string[] {
  const names = (list: readonly IdleNode[]): string => list.map((s) => `node ${s.index + 1}`).join(', ');
  const lines: string[] = [];
  const ownedNone = idle.filter((s) => s.hostsOwnedMost === 0);
  const ownedSome = idle.filter((s) => s.hostsOwnedMost !== 0);
  if (ownedSome.length > 0) {
    if (idle.length === all.nodes && all.pages > 0) {
      lines.push(
        `nothing left to fetch: the crawl was already complete (${all.pages} pages in the data directory); no node fetched anything`,
      );
      return lines;
    }
    const known = ownedSome.filter((s) => s.hostsOwnedMost !== undefined);
    if (known.length > 0)
      lines.push(`${names(known)} fetched nothing: nothing left to fetch on the hosts ${known.length === 1 ? 'it' : 'they'} owned`);
    const unknown = ownedSome.filter((s) => s.hostsOwnedMost === undefined);
    if (unknown.length > 0) lines.push(`${names(unknown)} fetched nothing`);
  }
  if (ownedNone.length > 0) {
    lines.push(
      `${names(ownedNone)} fetched nothing: owned no host: rendezvous hashing gave ${all.hosts === 1 ? 'the only host' : `each of the ${all.hosts} hosts`} ` +
        `to another node (one node per host; --partition url shares one host's pages between nodes)`,
    );
  }
  return lines;
}
