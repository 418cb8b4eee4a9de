import type { PolitenessLimit } from '../frontier/politeness.js';
import { EXCLUSION_CODES } from '../store/errs-tally.js';

/** How long after the last wait a node still counts as held back by politeness (progress display). */
const HELD_BACK_RECENT_MS = 3_000;

/** What a crawl cut off on purpose, counted for the end summary (docs/options.md, "Limits and traps"). */
export interface CutCounts {
  /** Links deeper than --max-depth. */
  depth: number;
  /** Links longer than the URL length limit. */
  tooLong: number;
  /** URLs with a path segment repeated too often. */
  repeatedSegment: number;
  /** URLs beyond the per-pattern budget (--max-pages-per-pattern). */
  patternBudget: number;
  /** URLs of hosts past --max-pages-per-host. */
  hostBudget: number;
  /** Links dropped from memory because the frontier was full (still on disk). */
  frontierFull: number;
  /** Pages cut at --max-bytes. */
  truncated: number;
  /** Hosts left alone for the run (robots.txt unavailable too many times). */
  hostGaveUp: number;
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Counters of one node's run; the progress display, the heartbeat and the summary read them. */
export class CrawlStats {
  /** Links records written (pages, redirects, non-HTML). */
  pages = 0;
  /** Links records written, by `html` or `other` and the HTTP status: `html 200`, `other 301`. */
  readonly pagesBy = new Map<string, number>();
  /** Of which HTML pages stored under html/. */
  htmlPages = 0;
  /** Body bytes stored. */
  bytes = 0;
  /** HTTP requests made (pages, redirect hops, robots.txt, sitemaps). */
  requests = 0;
  /** Of `requests`, by the HTTP status of the answer; `none` when no answer came. */
  readonly requestsByStatus = new Map<string, number>();
  /** Errs records written, by code (a URL retried three times counts three times). */
  readonly errors = new Map<string, number>();
  /** URLs whose failure became final, by code. */
  readonly finalErrors = new Map<string, number>();
  readonly cut: CutCounts = {
    depth: 0,
    tooLong: 0,
    repeatedSegment: 0,
    patternBudget: 0,
    hostBudget: 0,
    frontierFull: 0,
    truncated: 0,
    hostGaveUp: 0,
  };
  /** Times the user's --hook threw. */
  hookErrors = 0;
  /**
   * Discovery: reseeds and hand-off reads (docs/protocol.md), how many, the records and
   * hand-offs they read, and the process CPU (microseconds) spent while they ran.
   */
  readonly discovery = { reseeds: 0, recordsRead: 0, handoffsRead: 0, cpuMicros: 0 };
  /** Heartbeats run, and their wall time (ms): what a node pays per beat whatever it crawls (docs/benchmarks-log.md, "Broad crawl"). */
  readonly heartbeats = { beats: 0, totalMs: 0, maxMs: 0 };
  /**
   * Pages fetched but not written because their host's lease was lost or this node was
   * fenced (docs/protocol.md, "Who crawls what"): the host's new owner fetches them again.
   */
  leftToNewOwner = 0;
  /** Hosts this node lent to peers (docs/protocol.md, "Lending hosts"). */
  hostsLent = 0;
  /** Hosts this node let go with their lease held, to a node that joined or to a borrower (docs/protocol.md, "Who crawls what"). */
  hostsHandedOn = 0;
  /** Times a --hook call did not answer within --hook-timeout. */
  hookTimeouts = 0;
  round = 0;
  queued = 0;
  /** Of `queued`, each host's, set when the node stops (for `status`: src/store/run-state.ts byHost). */
  queuedByHost: Record<string, number> | undefined;
  inFlight = 0;
  #hostsOwned = 0;
  /** The most hosts this node owned at once in this run (an idle node that owned some had nothing to fetch). */
  hostsOwnedMost = 0;
  nodesAlive = 1;
  state = 'starting';
  /** Times a host with work had to wait for its next request, by the rule that held it back. */
  readonly heldBackBy = new Map<PolitenessLimit, number>();
  #lastHeldBack: { at: number; why: PolitenessLimit } | undefined;
  readonly #samples: { at: number; pages: number }[] = [];

  get hostsOwned(): number {
    return this.#hostsOwned;
  }

  set hostsOwned(n: number) {
    this.#hostsOwned = n;
    if (n > this.hostsOwnedMost) this.hostsOwnedMost = n;
  }

  constructor(private readonly monotonic: () => number) {
    this.#samples.push({ at: monotonic(), pages: 0 });
  }

  /** A request was sent: `status` is its answer's, undefined when none came (src/request/pipeline.ts). */
  countRequest(status: number | undefined): void {
    this.requests++;
    bump(this.requestsByStatus, status === undefined ? 'none' : String(status));
  }

  /** A links record was written for an answer with `status`; `html` when its body was stored. */
  countPage(status: number, html: boolean): void {
    this.pages++;
    if (html) this.htmlPages++;
    bump(this.pagesBy, `${html ? 'html' : 'other'} ${status}`);
  }

  countError(code: string, final: boolean): void {
    bump(this.errors, code);
    if (final) bump(this.finalErrors, code);
  }

  /** A host had work but politeness made it wait (`why`); `now` is monotonic. */
  heldBack(why: PolitenessLimit | undefined, now: number): void {
    if (why === undefined) return;
    this.heldBackBy.set(why, (this.heldBackBy.get(why) ?? 0) + 1);
    this.#lastHeldBack = { at: now, why };
  }

  /** The politeness rule that held a request back in the last few seconds, if any. */
  heldBackNow(): PolitenessLimit | undefined {
    const last = this.#lastHeldBack;
    return last !== undefined && this.monotonic() - last.at <= HELD_BACK_RECENT_MS ? last.why : undefined;
  }

  /** Errs records written that are failures: not those of URLs robots.txt excludes (docs/errors.md). */
  get failureCount(): number {
    let n = 0;
    for (const [code, v] of this.errors) if (!EXCLUSION_CODES.has(code)) n += v;
    return n;
  }

  /** Errs records written for URLs robots.txt excludes (EXCLUSION_CODES): never requested, no failure. */
  get exclusionCount(): number {
    let n = 0;
    for (const [code, v] of this.errors) if (EXCLUSION_CODES.has(code)) n += v;
    return n;
  }

  /** Pages per second over roughly the last ten seconds. */
  rate(): number {
    const now = this.monotonic();
    this.#samples.push({ at: now, pages: this.pages });
    while (this.#samples.length > 2 && now - this.#samples[1]!.at > 10_000) this.#samples.shift();
    const first = this.#samples[0]!;
    const dt = (now - first.at) / 1000;
    return dt <= 0 ? 0 : (this.pages - first.pages) / dt;
  }
}
