import type { Ownership } from '../../cluster/ownership.js';
import type { CrawlConfig } from '../../config/crawl-config.js';
import type { CrawlStats } from '../../progress/stats.js';
import { urlKey } from '../../url/key.js';
import type { Frontier } from '../frontier.js';
import type { HostState } from '../host-state.js';
import type { ScopeFilter } from '../scope.js';
import { urlShape } from '../traps.js';
import type { UrlPriority } from '../../hooks/url-priority.js';
import type { Referrer } from '../../store/records.js';
import { depthRule } from './depth-rule.js';
import { hostBudgetRule } from './host-budget-rule.js';
import { hostOpenRule } from './host-open-rule.js';
import { knownRule } from './known-rule.js';
import { ownershipRule } from './ownership-rule.js';
import { patternBudgetRule } from './pattern-budget-rule.js';
import type { Candidate, HostRule, UrlRule } from './rule.js';
import { scopeRule } from './scope-rule.js';
import { trapRule } from './trap-rule.js';
import { userFilterRule } from './user-filter-rule.js';

/** What an offer came to: queued; known already or cut by a rule; or no room in memory (it stays on disk). */
export type OfferResult = 'queued' | 'known' | 'full';

/** What admission tells the part that takes hosts (HostKeeper): it does no I/O itself. */
export interface AdmissionEvents {
  /** A host this node owns was offered a URL for the first time: its lease and listing are wanted. */
  hostWanted(host: HostState): void;
}

export interface AdmissionDeps {
  readonly config: CrawlConfig;
  readonly stats: CrawlStats;
  readonly scope: ScopeFilter;
  readonly ownership: Ownership;
  /** The user's --hook filter, if any. */
  readonly filter?: (url: string) => boolean;
  /** A --hook filter threw (the URL is kept). */
  readonly filterFailed?: (err: unknown) => void;
  /** The --hook URL prioritizer, if any (src/hooks/url-priority.ts). */
  readonly priority?: UrlPriority;
  readonly frontier: Frontier;
  readonly events: AdmissionEvents;
}

/**
 * The admission chain (docs/architecture.md): every URL that could be fetched (links, seeds,
 * redirect targets) passes the same rules, in this order, each in its own file here: depth,
 * known (done or claimed), scope and include/exclude, the user's --hook filter, traps,
 * ownership; then, with the host's state, the host still open, the host budget and the
 * pattern budget. A URL that passes is claimed: queued (links, seeds) or fetched at once
 * (a redirect's next hop).
 */
export class Admission {
  readonly #d: AdmissionDeps;
  readonly #urlRules: readonly UrlRule[];
  readonly #hostRules: readonly HostRule[];

  constructor(deps: AdmissionDeps) {
    this.#d = deps;
    const { config, stats } = deps;
    this.#urlRules = [
      depthRule(config.maxDepth, stats),
      knownRule,
      scopeRule(deps.scope),
      ...(deps.filter === undefined ? [] : [userFilterRule(deps.filter, deps.filterFailed ?? (() => undefined))]),
      trapRule(config.maxRepeatedSegments, stats),
      ownershipRule(deps.ownership),
    ];
    this.#hostRules = [hostOpenRule, hostBudgetRule(config.maxPagesPerHost, stats), patternBudgetRule(config.maxPagesPerPattern, stats)];
  }

  /** True when this node crawls URLs of the host at all (scope and ownership). */
  wantsHost(hostDir: string): boolean {
    return this.#d.scope.hostInScope(hostDir) && this.#d.ownership.ownsHost(hostDir);
  }

  /**
   * The state of a host this node owns (the caller checked `wantsHost`), made at its first
   * use: then the host is wanted (`events.hostWanted`), and whoever listens takes it.
   */
  want(hostDir: string, url?: string): HostState {
    const { host, created } = this.#d.frontier.hostFor(hostDir, url);
    if (created) this.#d.events.hostWanted(host);
    return host;
  }

  /**
   * Takes a link or seed of a wanted host (the caller checked `wantsHost`) into the frontier
   * if it passes the chain and fits in memory. What is cut is counted (the end summary shows it).
   * `priority`: as `offerRanked` computed it; every way in goes through `offerRanked`.
   */
  offer(url: string, hostDir: string, depth: number, priority?: number, referrer?: Referrer): OfferResult {
    const c: Candidate = { url, key: urlKey(url), hostDir, depth, via: 'link' };
    const { frontier } = this.#d;
    if (!this.#passesUrlRules(c, frontier.hosts.get(hostDir))) return 'known';
    const host = this.want(hostDir, url);
    host.knowOrigin(url);
    const item = {
      url,
      key: c.key,
      depth,
      ...(priority === undefined ? {} : { priority }),
      ...(referrer === undefined ? {} : { referrer }),
    };
    // A host left alone for this run keeps its links, in no record of it, for a node that takes
    // it while this one lives on: they go with the host if it moves (docs/errors.md).
    if (host.gaveUp && host.phase !== 'releasing') host.setAside(item);
    if (!this.#passesHostRules(c, host)) return 'known';
    if (!frontier.hasRoom()) return 'full';
    host.countShape(urlShape(url));
    // A URL robots.txt disallows is not fetched, only recorded (ROBOTS_DISALLOWED): it goes
    // first, so that its record is written as it is found, not all of them after the last
    // page (breadth first, they are a level deeper than the page that links to them).
    const disallowed = host.robots !== undefined && !host.robots.isAllowed(url);
    frontier.enqueue(host, item, disallowed);
    return 'queued';
  }

  /**
   * The way into the frontier of every URL found (links, seeds, reseeds, hand-offs,
   * sitemaps): `offer` with the --hook priority of the URL (computed again at every offer,
   * reseeds included: it is not stored). Without a priority hook it is `offer`, synchronously. A URL
   * known already is not given to the hook; the whole chain runs after it answers.
   * `referrer`: the page whose links offered it (none for a seed), which its errs record names.
   */
  offerRanked(url: string, hostDir: string, depth: number, referrer?: Referrer): OfferResult | Promise<OfferResult> {
    const priority = this.#d.priority;
    if (priority === undefined) return this.offer(url, hostDir, depth, undefined, referrer);
    const host = this.#d.frontier.hosts.get(hostDir);
    if (host !== undefined && host.isKnown(urlKey(url))) return 'known';
    return priority(url, { depth, host: hostDir }).then((p) => this.offer(url, hostDir, depth, p, referrer));
  }

  /**
   * The next hop of a redirect, on the host being fetched, may be followed only if it passes
   * the chain, robots.txt allows it, and nobody else has it or will fetch it: it is claimed then.
   */
  admitRedirect(host: HostState, target: { url: string; key: string; hostDir: string; depth: number }): boolean {
    const c: Candidate = { ...target, via: 'redirect' };
    if (!this.#passesUrlRules(c, host) || !this.#passesHostRules(c, host)) return false;
    if (host.robots !== undefined && !host.robots.isAllowed(c.url)) return false;
    host.countShape(urlShape(c.url));
    host.claim(c.key);
    return true;
  }

  #passesUrlRules(c: Candidate, host: HostState | undefined): boolean {
    for (const rule of this.#urlRules) if (!rule(c, host)) return false;
    return true;
  }

  #passesHostRules(c: Candidate, host: HostState): boolean {
    for (const rule of this.#hostRules) if (!rule(c, host)) return false;
    return true;
  }
}
