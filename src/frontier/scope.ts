import { getDomain } from 'tldts';
import type { Scope } from '../config/crawl-config.js';

/** The host name inside a host directory name (`example.com_8080` gives `example.com`). */
export function hostnameOfHostDir(hostDir: string): string {
  const m = /_[0-9]{1,5}$/.exec(hostDir);
  return m === null ? hostDir : hostDir.slice(0, m.index);
}

/**
 * The registrable domain of a host name (`www.example.co.uk` gives `example.co.uk`), from the
 * Public Suffix List through tldts. Names the list does not know (`localhost`, IP addresses,
 * test names) are their own domain.
 */
export function domainOf(hostname: string): string {
  if (hostname.startsWith('[') || /^[0-9.]+$/.test(hostname)) return hostname;
  return getDomain(hostname, { allowPrivateDomains: false }) ?? hostname;
}

/**
 * Which URLs the crawl follows: `host` keeps the seeds' hosts (with their ports), `domain`
 * their domains, `any` everything; then at least one --include pattern must match (when any
 * are given) and no --exclude pattern may match.
 */
export class ScopeFilter {
  readonly #scope: Scope;
  readonly #include: readonly RegExp[];
  readonly #exclude: readonly RegExp[];
  readonly #hostDirs = new Set<string>();
  readonly #domains = new Set<string>();

  constructor(scope: Scope, include: readonly RegExp[], exclude: readonly RegExp[]) {
    this.#scope = scope;
    this.#include = include;
    this.#exclude = exclude;
  }

  /** Widens the scope to a seed's host (or domain). */
  addSeed(hostDir: string): void {
    this.#hostDirs.add(hostDir);
    this.#domains.add(domainOf(hostnameOfHostDir(hostDir)));
  }

  get seedHostCount(): number {
    return this.#hostDirs.size;
  }

  /** True when the host as a whole may be crawled (before the per-URL patterns). */
  hostInScope(hostDir: string): boolean {
    switch (this.#scope) {
      case 'any':
        return true;
      case 'host':
        return this.#hostDirs.has(hostDir);
      case 'domain':
        return this.#domains.has(domainOf(hostnameOfHostDir(hostDir)));
    }
  }

  /** True when the URL (of a host in scope) passes --include and --exclude. */
  accepts(url: string): boolean {
    if (this.#include.length > 0 && !this.#include.some((re) => re.test(url))) return false;
    return !this.#exclude.some((re) => re.test(url));
  }
}
