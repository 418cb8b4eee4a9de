import { setMaxListeners } from 'node:events';
import type { Ownership } from '../cluster/ownership.js';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { Fetcher } from '../fetch/fetcher.js';
import type { Admission } from '../frontier/admission/admission.js';
import type { CrawlStats } from '../progress/stats.js';
import type { HostStore } from '../store/host-store.js';
import type { NormalizeOptions } from '../url/normalize.js';
import type { ExtractThread } from '../extract/extract-thread.js';
import type { Committer } from '../commit/committer.js';
import { fetchPage, type FetchPageContext } from './fetch-page.js';
import type { PageOutcome, Target } from '../fetch/page-outcome.js';
import type { Frontier } from '../frontier/frontier.js';
import type { HostKeeper } from './host-keeper.js';
import type { HostRobots } from './host-robots.js';
import type { HostState } from '../frontier/host-state.js';
import type { QueueItem } from '../frontier/host-queue.js';
import type { MiddlewareChain } from '../hooks/middleware-chain.js';
import type { Recrawler } from '../recrawl/recrawler.js';
import type { Sitemaps } from '../sitemap/sitemaps.js';
import { nothingInHand } from './work-left.js';
import { InFlightTasks } from './in-flight-tasks.js';

export interface RequestRunnerDeps {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  readonly stats: CrawlStats;
  readonly fetcher: Fetcher;
  readonly admission: Admission;
  readonly ownership: Ownership;
  readonly normalize: NormalizeOptions;
  /** Finds the links of HTML pages in a thread (ExtractThread), when the process has a core for it. */
  readonly extractor?: ExtractThread | undefined;
  readonly store: HostStore;
  readonly committer: Committer;
  readonly keeper: HostKeeper;
  /** Fetches a host's robots.txt and decides what the host does when it cannot be had. */
  readonly hostRobots: HostRobots;
  readonly frontier: Frontier;
  /** Stops requests in flight (after the stop grace period), robots.txt fetches included. */
  readonly abort: AbortController;
  readonly control: RunnerControl;
  /** The fetch middleware: built-in steps (headers, robots.txt, status) and the --hook ones. */
  readonly middleware: MiddlewareChain;
  /** Revisits (--recrawl-after): validators of pages fetched before. */
  readonly recrawler?: Recrawler | undefined;
  /** Sitemaps (docs/sitemaps.md): which queued URLs are sitemaps, and how to fetch them. */
  readonly sitemaps?: Sitemaps | undefined;
}

/** What the runner asks of the node that runs it. */
export interface RunnerControl {
  /** True while another request may start (room in --concurrency, not stopping, not paused). */
  mayStart(): boolean;
  /** True when results may not be written: the node may be counted dead (no heartbeat). */
  fenced(): boolean;
  stopping(): boolean;
  onStoreError(err: unknown): void;
  /** Called when a request ends and nothing is left in flight or queued. */
  wake(): void;
}

/**
 * The requests of a node: takes what may start from the frontier (`pump`), fetches it
 * (fetch-page.ts: redirects, extraction), then commits what came of it (committer.ts), with
 * the claims, politeness slots and counts that go with it. Knows how many requests are in
 * flight, and waits for them at shutdown.
 */
export class RequestRunner {
  readonly #d: RequestRunnerDeps;
  readonly #abort: AbortController;
  readonly #tasks: InFlightTasks;
  #inFlight = 0;
  #fetched = 0;
  #threadsStarted = false;
  /**
   * Pages fetched whose commit the mount refused (docs/protocol.md, "Faults of the mount"), kept with
   * their claims and host slots (a host let go keeps its lease for them), written when it is back.
   */
  #unwritten: { host: HostState; item: QueueItem; outcome: PageOutcome; sitemap: boolean; end: 'ok' | 'transient' | 'final' }[] = [];

  constructor(deps: RequestRunnerDeps) {
    this.#d = deps;
    this.#abort = deps.abort;
    this.#tasks = new InFlightTasks(deps.clock, (err) => this.#d.control.onStoreError(err));
    // Every request in flight listens for the stop signal.
    setMaxListeners(Infinity, this.#abort.signal);
  }

  /** Aborts requests in flight (after the stop grace period), robots.txt fetches included. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Fetched pages waiting for the mount to take their commit. */
  get unwritten(): number {
    return this.#unwritten.length;
  }

  /**
   * Writes the pages whose commit the mount refused, now that it is back (also of a host
   * moving to another node: its lease is released after them). A page of a host whose lease
   * was lost is dropped: its new owner fetches it; one of a host still held while this node is
   * fenced goes back in the queue, unless `leasesJustRead` (the leases were read back as this
   * node's a moment ago). Throws (keeping what is left) when the mount fails again.
   */
  async commitUnwritten(leasesJustRead = false): Promise<void> {
    const d = this.#d;
    while (this.#unwritten.length > 0) {
      const { host, item, outcome, sitemap, end } = this.#unwritten[0]!;
      const held = (host.phase === 'ready' || host.phase === 'releasing') && !host.leaseLost; // releasing: its lease waits for this
      if (held && (leasesJustRead || !d.control.fenced())) await this.#commit(host, outcome, sitemap);
      else {
        d.recrawler?.abandon(host.dir, item.key);
        this.#unclaim(host, item, outcome);
        if (host.phase === 'ready' && !host.leaseLost) d.frontier.requeue(host, item);
        else d.stats.leftToNewOwner++;
      }
      this.#unwritten.shift();
      host.endRequest(end);
      this.#ended(host);
    }
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Pages fetched in this run (for --max-pages). */
  get fetched(): number {
    return this.#fetched;
  }

  /** Starts requests while there is room: what the frontier says may start next. */
  pump(): void {
    const { frontier, control, clock } = this.#d;
    const now = clock.monotonic();
    while (control.mayStart()) {
      const next = frontier.next(now);
      if (next === undefined) {
        // Due pages that waited for room under --frontier-cap (docs/recrawl.md).
        if ((this.#d.recrawler?.refill() ?? 0) > 0) continue;
        return;
      }
      if (next.kind === 'robots') this.#fetchRobots(next.host);
      else this.#start(next.host, next.item, now);
    }
  }

  /**
   * The first request (robots.txt, as a rule) has ended: the write and extract threads start
   * now, and their modules load while the first pages are fetched, instead of when the first
   * page needs them (130 to 300 ms of a busy start). Not earlier: on two cores, loading them
   * beside the node's own start delayed the first request by 40 to 100 ms (docs/benchmarks-log.md,
   * "The threads started at the first response").
   */
  #startThreads(): void {
    this.#threadsStarted = true;
    this.#d.store.startWriteThread();
    this.#d.extractor?.start();
  }

  /** Starts `item` of `host` now: it takes the host's politeness slot, given back when #run ends. */
  #start(host: HostState, item: QueueItem, now: number): void {
    const target: Target = { ...item, hostDir: host.dir };
    this.#inFlight++;
    this.#fetched++;
    host.countFetch(1);
    const previousStart = host.beginRequest(now);
    this.#tasks.track(this.#run(host, item, target, previousStart));
  }

  /** Fetches a host's robots.txt, counted among the requests in flight (--concurrency). */
  #fetchRobots(host: HostState): void {
    if (host.robotsLoading || host.robots !== undefined) return;
    this.#inFlight++;
    this.#tasks.track(
      this.#d.hostRobots.fetch(host).finally(() => {
        this.#inFlight--;
        this.#ended(host);
      }),
    );
  }

  /** Waits for the requests in flight, at most `graceMs`. */
  drain(graceMs: number): Promise<void> {
    return this.#tasks.drain(graceMs);
  }

  /** Abandons the requests in flight: their results are not written. */
  abort(): void {
    this.#abort.abort();
  }

  async #run(host: HostState, item: QueueItem, target: Target, previousStart: number): Promise<void> {
    const d = this.#d;
    let outcome: PageOutcome | undefined;
    let committing = false;
    const sitemap = d.sitemaps?.isSitemap(host.dir, item.key) === true;
    let kind: 'ok' | 'transient' | 'final' = 'ok';
    let kept = false;
    try {
      // With URL partitioning another node may have fetched this URL while it was its owner.
      if (d.ownership.partition === 'url' && (await d.store.hasLinks(host.dir, item.key))) {
        host.markDone(item.key);
        host.countFetch(-1);
        this.#fetched--;
        return;
      }
      const visit = d.recrawler === undefined ? undefined : await d.recrawler.prepare(host, item.key);
      if (visit?.due === false) {
        host.countFetch(-1);
        this.#fetched--;
        return;
      }
      const ctx: FetchPageContext = {
        validators: visit?.due === true ? visit.validators : undefined,
        fetcher: d.fetcher,
        clock: d.clock,
        normalize: d.normalize,
        maxRedirects: d.config.maxRedirects,
        obeyRelNofollow: d.config.obeyRelNofollow === true,
        extractor: d.extractor,
        signal: this.#abort.signal,
        claimRedirect: (t) => d.admission.admitRedirect(host, t),
        pace: () => this.#pace(host),
        sending: () => host.sending(d.clock.monotonic()),
        sent: (status) => d.stats.countRequest(status),
        middleware: d.middleware,
      };
      outcome = sitemap ? await d.sitemaps!.fetch(target, ctx) : await fetchPage(target, ctx);
      if (outcome.requests === 0) {
        // Nothing was sent (robots.txt or a --hook skipped it, or a hook answered it): it is
        // not a fetch (--max-pages) and takes no turn in the host's politeness.
        host.countFetch(-1);
        this.#fetched--;
        host.sentNothing(previousStart);
      }
      const first = outcome.commits[0]!;
      if (first.type === 'error') kind = first.failure.kind;
      const aborted = first.type === 'error' && first.failure.code === 'ABORTED' && d.control.stopping(); // not: a hop #pace held back
      // A host that moved to another node is still ours until its requests in flight are
      // committed and the lease is released; a host whose lease was lost is not.
      if (aborted || host.leaseLost || d.control.fenced()) {
        d.recrawler?.abandon(host.dir, item.key);
        this.#unclaim(host, item, outcome);
        // Fenced only: the host may still be ours, and nothing starts before its lease is read back.
        if (!aborted && !host.leaseLost && host.phase === 'ready') d.frontier.requeue(host, item);
        else if (!aborted) d.stats.leftToNewOwner++;
        return;
      }
      committing = true;
      await this.#commit(host, outcome, sitemap);
    } catch (err) {
      if (committing && !d.control.stopping()) {
        // The mount failed under the commit: the page is kept (claims, slot), written when the mount is back, not fetched again.
        this.#unwritten.push({ host, item, outcome: outcome!, sitemap, end: kind });
        kept = true;
      } else {
        // Failed before its commit: the URL is not done; it goes back in the queue.
        if (outcome !== undefined) this.#unclaim(host, item, outcome);
        if (host.phase === 'ready' && !d.control.stopping()) d.frontier.requeue(host, item);
      }
      // Reported here, before `finally` frees the slot: a failed mount stops fetching before
      // the next request can start (one started then would be fetched and not written).
      d.control.onStoreError(err);
    } finally {
      this.#inFlight--;
      if (!kept) host.endRequest(kind);
      this.#ended(host);
    }
  }

  #ended(host: HostState): void {
    if (!this.#threadsStarted) this.#startThreads();
    const frontier = this.#d.frontier;
    frontier.schedule(host);
    if (nothingInHand({ queued: frontier.queued, inFlight: this.#inFlight })) this.#d.control.wake();
  }

  /** Waits until the host's politeness allows the next hop of a redirect chain; false when the hop may not go (fenced, lease lost). */
  async #pace(host: HostState): Promise<boolean> {
    const wait = host.hopWaitMs(this.#d.clock.monotonic());
    if (wait > 0) await new Promise<void>((resolve) => this.#d.clock.setTimeout(resolve, wait));
    return !host.leaseLost && !this.#d.control.fenced();
  }

  /** Writes what fetching a URL came to (and, for a sitemap, what it says beyond its links). */
  async #commit(host: HostState, outcome: PageOutcome, sitemap: boolean): Promise<void> {
    await this.#d.committer.commit(host, outcome);
    if (sitemap) this.#d.sitemaps!.committed(host, outcome);
  }

  /** Releases the claims of an outcome that will not be committed (stopped, host lost). */
  #unclaim(host: HostState, item: QueueItem, outcome: PageOutcome): void {
    host.release(item.key);
    for (const t of outcome.claimed) host.release(t.key);
  }
}
