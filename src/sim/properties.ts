import { posix } from 'node:path';
import { isTransientStatus } from '../fetch/classify-error.js';
import { SUMMARY_DIR } from '../store/layout.js';
import { tempOwner } from '../store/temp-names.js';
import type { SimSite, SiteObserver, SiteRequest } from './sim-site.js';

/** How a run's properties are judged. */
export interface PropertySettings {
  readonly perHost: number;
  readonly deadAfterMs: number;
  /** The slowest clock rate of the run: others may count a node dead after dead-after on their own, faster clock. */
  readonly fastestRate: number;
}

/** Violations kept per run: the first few say enough. */
const MAX_KEPT = 20;

/**
 * The properties every simulated run must keep (docs/simulator.md), checked while it runs
 * (requests in flight on a host) and at its end (the records on the mount). A request is
 * *at risk* when its node's process was killed, or went longer than others may wait before
 * counting it dead without a heartbeat reaching the mount (paused, stalled, failing), while
 * it was in flight: such a request may overlap a new owner's and its URL may be fetched again,
 * and those are counted, not reported.
 */
export class Properties implements SiteObserver {
  readonly violations: string[] = [];
  /** Fetches again of a URL whose earlier fetch was at risk: allowed, counted against that bound. */
  refetched = 0;
  /** Requests that overlapped another node's on one host while the other was at risk. */
  overlapsAtRisk = 0;
  readonly #s: PropertySettings;
  readonly #inFlight = new Map<string, Set<SiteRequest>>();
  readonly #beats = new Map<string, number[]>();
  readonly #killed = new Map<string, number>();
  readonly #exited = new Map<string, number>();
  /** Why this run's crawl did not end, so that its pages are a later run's (property 3 is not judged). */
  #unfinished: string | undefined;

  constructor(settings: PropertySettings) {
    this.#s = settings;
  }

  /** A heartbeat of `process` reached the mount at `t`. */
  beat(process: string, t: number): void {
    const list = this.#beats.get(process) ?? [];
    list.push(t);
    this.#beats.set(process, list);
  }

  killed(process: string, t: number): void {
    this.#killed.set(process, t);
  }

  /** `process` ended its run (its requests were over by then). */
  exited(process: string, t: number): void {
    this.#exited.set(process, t);
  }

  /** Why property 3 does not hold this run to its end (docs/simulator.md, "Properties"), if it does not. */
  get unfinished(): string | undefined {
    return this.#unfinished;
  }

  /** The crawl did not end (`why`): the pages it did not reach are left to a later run, as a user would rerun it. */
  leftUnfinished(why: string): void {
    this.#unfinished ??= why;
  }

  violation(text: string): void {
    if (this.violations.length < MAX_KEPT) this.violations.push(text);
    else if (this.violations.length === MAX_KEPT) this.violations.push('...');
  }

  started(req: SiteRequest): void {
    const set = this.#inFlight.get(req.host) ?? new Set();
    this.#inFlight.set(req.host, set);
    let own = 1;
    for (const other of set) {
      if (other.process === req.process) own++;
      else if (this.atRisk(other.process, other.start, req.start)) this.overlapsAtRisk++;
      else this.violation(`per-host: ${req.node} started ${req.url} at ${t(req.start)} while ${other.node} had ${other.url} in flight`);
    }
    if (own > this.#s.perHost) this.violation(`per-host: ${req.node} had ${own} requests in flight on ${req.host} at ${t(req.start)}`);
    set.add(req);
  }

  ended(req: SiteRequest): void {
    this.#inFlight.get(req.host)?.delete(req);
  }

  /**
   * True when `process` was killed, or went without a heartbeat reaching the mount for `share`
   * of the dead-after time (on the fastest clock of the run), between `from` and `to`: 0.8 for
   * a node others may have counted dead, 0.5 for one that may have fenced itself
   * (docs/protocol.md, "Self-fencing") and left a page it had fetched to be fetched again.
   */
  atRisk(process: string, from: number, to: number, share = 0.8): boolean {
    const killed = this.#killed.get(process);
    if (killed !== undefined && killed <= to) return true;
    const limit = (share * this.#s.deadAfterMs) / this.#s.fastestRate;
    const beats = this.#beats.get(process) ?? [];
    let last = beats.length > 0 ? beats[0]! : from;
    for (const b of beats) {
      if (b > last && b - last > limit && b > from && last < to) return true;
      last = b;
    }
    return Math.min(to, killed ?? this.#exited.get(process) ?? to) - last > limit;
  }

  /** At the end: no URL fetched twice but for fetches at risk (robots.txt and transient answers aside). */
  checkFetches(site: SimSite): void {
    const byUrl = new Map<string, SiteRequest[]>();
    for (const r of site.requests) {
      if (r.status === undefined || isTransientStatus(r.status) || new URL(r.url).pathname === '/robots.txt') continue;
      const list = byUrl.get(r.url) ?? [];
      list.push(r);
      byUrl.set(r.url, list);
    }
    for (const [url, list] of byUrl) {
      for (let i = 1; i < list.length; i++) {
        const prev = list[i - 1]!;
        const next = list[i]!;
        if (this.atRisk(prev.process, prev.start, next.start, 0.5)) this.refetched++;
        else this.violation(`fetched twice: ${url} by ${prev.node} at ${t(prev.start)} and ${next.node} at ${t(next.start)}`);
      }
    }
    for (const r of site.requests)
      if (site.disallowed(r.url) && r.status !== undefined) this.violation(`robots.txt: ${r.node} fetched ${r.url}`);
  }

  /**
   * At the end, on the mount (`files`: every file under the data directory, relative names):
   * every record parses whole, no lease or temporary file is left but a killed node's; and
   * every page the crawl could reach is done in `reached` (the files as the crawl's end by the
   * rule left them).
   */
  checkMount(
    files: readonly { path: string; data: Buffer }[],
    site: SimSite,
    lostNodes: ReadonlySet<string>,
    reached: readonly { path: string; data: Buffer }[] = files,
  ): void {
    const records = new Set<string>();
    const summaries: { path: string; value: Record<string, unknown> }[] = [];
    for (const { path, data } of files) {
      const name = posix.basename(path);
      const owner = tempOwner(name);
      if (owner !== undefined) {
        if (owner !== 'takeover' && !lostNodes.has(owner)) this.violation(`temporary file left by ${owner}: ${path}`);
        continue;
      }
      const top = path.split('/')[0]!;
      if (!['links', 'errs', 'nodes', 'hosts', SUMMARY_DIR].includes(top) && name !== '.mountcrawl') continue;
      let value: Record<string, unknown>;
      try {
        value = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      } catch {
        this.violation(`record not whole: ${path} (${data.length} bytes)`);
        continue;
      }
      if (top === 'hosts' && !lostNodes.has(String(value.node))) this.violation(`lease left by ${String(value.node)}: ${path}`);
      if (top === SUMMARY_DIR) summaries.push({ path, value });
      if (top === 'links') records.add(path);
    }
    if (this.#unfinished === undefined) this.#checkReached(site, pagesOf(reached));
    for (const { path, value } of summaries) this.#checkSummary(path, value, records);
  }

  /** A host summary names only pages whose links records exist (docs/protocol.md, "Host summaries"): it may cover fewer, never more. */
  #checkSummary(path: string, value: Record<string, unknown>, records: ReadonlySet<string>): void {
    const host = String(value.host);
    const pages = Array.isArray(value.pages) ? (value.pages as unknown[]) : undefined;
    if (pages === undefined || `${SUMMARY_DIR}/${host}.json` !== path) return this.violation(`not a host summary: ${path}`);
    const named = pages.map((p) => (Array.isArray(p) ? String(p[0]) : ''));
    const absent = named.filter((key) => !records.has(`links/${host}/${key}.json`));
    if (absent.length > 0) this.violation(`${path} names ${absent.length} pages with no links record, e.g. ${absent[0]}`);
  }

  #checkReached(site: SimSite, { links, done, gaveUp }: Pages): void {
    const seen = new Set<string>(site.seeds);
    const queue = [...site.seeds];
    const missing: string[] = [];
    while (queue.length > 0) {
      const url = queue.shift()!;
      if (!done.has(url)) {
        if (!gaveUp.has(new URL(url).host)) missing.push(url);
        continue;
      }
      const record = links.get(url);
      const page = record === undefined ? undefined : site.pages.get(record.finalUrl);
      const next = page === undefined ? [] : page.kind === 'redirect' ? [page.target!] : page.links;
      for (const n of next) if (!seen.has(n)) seen.add(n), queue.push(n);
    }
    if (missing.length > 0) this.violation(`not done at the end: ${missing.length} reachable URLs, e.g. ${missing.slice(0, 3).join(' ')}`);
  }
}

function t(ms: number): string {
  return ms.toFixed(1);
}

/** What the records of a data directory say of its pages: each done URL, each links record's final URL, the hosts given up for this run. */
interface Pages {
  readonly links: ReadonlyMap<string, { finalUrl: string; status: number }>;
  readonly done: ReadonlySet<string>;
  readonly gaveUp: ReadonlySet<string>;
}

function pagesOf(files: readonly { path: string; data: Buffer }[]): Pages {
  const links = new Map<string, { finalUrl: string; status: number }>();
  const done = new Set<string>();
  const gaveUp = new Set<string>();
  for (const { path, data } of files) {
    const top = path.split('/')[0]!;
    if ((top !== 'links' && top !== 'errs') || tempOwner(posix.basename(path)) !== undefined) continue;
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    } catch {
      continue; // checkMount says so
    }
    if (top === 'links') {
      links.set(String(value.url), { finalUrl: String(value.finalUrl), status: Number(value.status) });
      done.add(String(value.url)).add(String(value.finalUrl));
    }
    // Final, or left for a later run with its host when robots.txt could not be had (src/crawl/host-robots.ts):
    // then the host's other URLs are left for that run too.
    if (top === 'errs' && value.final === true) done.add(String(value.url));
    if (top === 'errs' && String(value.message).startsWith('robots.txt unavailable')) gaveUp.add(new URL(String(value.url)).host);
  }
  return { links, done, gaveUp };
}
