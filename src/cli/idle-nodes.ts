import type { HostsOwned } from './child-messages.js';

/** A node of --processes that fetched nothing and failed nothing, for idleNodesLines. */
export interface IdleNode {
  /** 0-based. */
  readonly index: number;
  /** What it owned during its run; undefined when it did not say. */
  readonly owned: HostsOwned | undefined;
}

/**
 * The end lines that say why nodes fetched nothing (under host partitioning): the crawl was
 * already complete (every node fetched nothing, the data directory holds pages), the hosts it
 * owned passed to other nodes before it fetched (a node joined, and rendezvous hashing gave
 * them to it), its hosts had nothing left to fetch, or it owned no host at all.
 */
export function idleNodesLines(idle: readonly IdleNode[], all: { nodes: number; pages: number; hosts: number }): string[] {
  const names = (list: readonly IdleNode[]): string => list.map((s) => `node ${s.index + 1}`).join(', ');
  const they = (list: readonly IdleNode[]): string => (list.length === 1 ? 'it' : 'they');
  const lines: string[] = [];
  const ownedNone = idle.filter((s) => s.owned?.most === 0);
  const ownedSome = idle.filter((s) => s.owned?.most !== 0);
  if (ownedSome.length > 0) {
    if (idle.length === all.nodes && all.pages > 0) {
      lines.push(
        `nothing left to fetch: the crawl was already complete (${all.pages} pages in the data directory); no node fetched anything`,
      );
      return lines;
    }
    const handedOn = ownedSome.filter((s) => (s.owned?.handedOn ?? 0) > 0);
    if (handedOn.length > 0) {
      lines.push(
        `${names(handedOn)} fetched nothing: the hosts ${they(handedOn)} owned passed to other nodes before ${they(handedOn)} fetched ` +
          '(rendezvous hashing moves a host to a node that joins; one node per host)',
      );
    }
    const known = ownedSome.filter((s) => s.owned !== undefined && s.owned.handedOn === 0);
    if (known.length > 0) lines.push(`${names(known)} fetched nothing: nothing left to fetch on the hosts ${they(known)} owned`);
    const unknown = ownedSome.filter((s) => s.owned === undefined);
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
