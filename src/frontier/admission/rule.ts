import type { HostState } from '../host-state.js';

/** A URL that could be fetched: a link, a seed, a redirect target. */
export interface Candidate {
  /** Normalized URL. */
  readonly url: string;
  readonly key: string;
  readonly hostDir: string;
  readonly depth: number;
  /** How it came: a link or seed to queue, or the next hop of a redirect being followed. */
  readonly via: 'link' | 'redirect';
}

/** One admission rule on the URL alone (`host`: the host's state if this node has it yet). True: it may pass. */
export type UrlRule = (c: Candidate, host: HostState | undefined) => boolean;

/** One admission rule that needs the host's state (budgets). True: it may pass. */
export type HostRule = (c: Candidate, host: HostState) => boolean;
