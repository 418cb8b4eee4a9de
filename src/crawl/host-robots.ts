import { buildErrsRecord } from '../commit/build-records.js';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import { FetchFailure } from '../errors.js';
import { ALLOW_ALL, RobotsUnavailable, type RobotsCache } from '../fetch/robots.js';
import { leaveAloneAtFirstContact } from '../frontier/first-contact.js';
import type { Frontier } from '../frontier/frontier.js';
import type { QueueItem } from '../frontier/host-queue.js';
import type { HostState } from '../frontier/host-state.js';
import { attemptsAfterFailure, nextRetryDelay } from '../frontier/retry-policy.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import type { PipelineContext } from '../request/pipeline.js';
import { robotsRules } from '../request/robots-request.js';
import type { Sitemaps } from '../sitemap/sitemaps.js';
import type { HostStore } from '../store/host-store.js';
import type { ErrsRecord } from '../store/records.js';

export interface HostRobotsDeps {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly stats: CrawlStats;
  readonly store: HostStore;
  /** The hosts' robots.txt files on the mount. */
  readonly robots: RobotsCache;
  /** How robots.txt is requested: the fetcher and middleware every request goes through; the signal aborts it at shutdown. */
  readonly pipeline: PipelineContext;
  readonly frontier: Frontier;
  /** Sitemaps (docs/sitemaps.md): found when robots.txt is known, before the queue starts. */
  readonly sitemaps?: Sitemaps | undefined;
  readonly onStoreError: (err: unknown) => void;
  readonly wake: () => void;
  /** True when this node may already be counted dead (docs/protocol.md, "Self-fencing"): nothing is sent then. */
  readonly fenced: () => boolean;
}

/**
 * A host's robots.txt in this node: the request (src/request/robots-request.ts, through the
 * pipeline every request takes), and what the host does when it cannot be had: it waits and
 * tries again with the back-off of every retry (nextRetryDelay, or as long as Retry-After
 * asks); after --max-attempts, or at once when trying again cannot help (TLS, a private
 * address), it is left alone for this run and its queued URLs are recorded with the reason,
 * as errs records like any page's.
 */
export class HostRobots {
  readonly #d: HostRobotsDeps;
  /** Hosts left alone for this run, with why (their later links are set aside: recordSetAside). */
  readonly #leftAlone = new Map<HostState, RobotsUnavailable>();

  constructor(deps: HostRobotsDeps) {
    this.#d = deps;
  }

  /** Fetches (or reads from the mount) the host's robots.txt; its queue waits meanwhile. */
  async fetch(host: HostState): Promise<void> {
    const { config, clock, log } = this.#d;
    if (host.robotsLoading || host.robots !== undefined) return;
    if (!config.robots) {
      host.robotsKnown(ALLOW_ALL);
      this.#d.frontier.schedule(host);
      return;
    }
    host.robotsStarted();
    const previousStart = host.beginRequest(clock.monotonic());
    let outcome: 'ok' | 'transient' = 'ok';
    let sent = false;
    try {
      // The pipeline counts the requests sent: robots.txt read from the mount is none (docs/protocol.md).
      const rules = await robotsRules(
        this.#d.robots,
        host.dir,
        host.origin ?? `http://${host.dir}`,
        {
          ...this.#d.pipeline,
          sending: () => {
            sent = true;
            host.sending(clock.monotonic());
          },
        },
        // Reading the mount may have taken long: the host may be another node's by now.
        () => !this.#d.fenced() && !host.leaseLost,
      );
      await this.#d.sitemaps?.discover(host, rules.sitemaps ?? []);
      host.robotsKnown(rules);
    } catch (err) {
      const failures = host.robotsFailed(err instanceof RobotsUnavailable);
      if (err instanceof RobotsUnavailable) {
        outcome = 'transient';
        // A refused first contact with a host never reached gives up at once (src/frontier/first-contact.ts).
        const wait =
          err.kind === 'final' || leaveAloneAtFirstContact(err.code, failures, host.doneCount)
            ? undefined
            : nextRetryDelay(failures, config, err.retryAfterMs);
        if (wait === undefined) {
          await this.#giveUp(host, err);
        } else {
          log.warn('robots.txt unavailable, host waits', { host: host.dir, reason: err.reason, waitMs: wait });
          host.robotsRetryLater(clock.monotonic() + wait);
        }
      } else if (!(err instanceof FetchFailure && err.code === 'ABORTED')) {
        this.#d.onStoreError(err);
      }
    } finally {
      // Read from the mount, nothing went to the host: its first page need not wait a --delay.
      if (!sent) host.sentNothing(previousStart);
      host.endRequest(outcome);
    }
    this.#d.frontier.schedule(host);
    this.#d.wake();
  }

  /**
   * Leaves a host alone for the rest of this run and records its queued URLs with the reason
   * (final when trying again cannot help; otherwise due for a later run, which will try
   * robots.txt again). When the mount fails under the records, the host is not left alone
   * after all: its URLs go back in its queue, not recorded, and robots.txt is asked for again
   * once the mount is back (a give-up again records them then).
   */
  async #giveUp(host: HostState, err: RobotsUnavailable): Promise<void> {
    host.giveUp();
    const pending = this.#d.frontier.dropHost(host);
    this.#d.log.warn('leaving host alone for this run', { host: host.dir, reason: err.reason, urls: pending.length });
    try {
      await this.#record(host, pending, err);
    } catch (writeErr) {
      host.keepAfterAll();
      // With the links set aside while the records were written.
      for (const item of [...pending, ...this.#d.frontier.dropHost(host)]) this.#d.frontier.requeue(host, item);
      this.#d.onStoreError(writeErr);
      return;
    }
    this.#leftAlone.set(host, err);
    this.#d.stats.cut.hostGaveUp++;
  }

  /**
   * At the node's exit, before its leases go: the links of hosts left alone that came after the
   * give-up (set aside, in no record) are recorded as the give-up recorded the queued ones, so
   * that a node that takes the host reads them (docs/errors.md). False when some could not be
   * written: they are then only in this node's memory.
   */
  async recordSetAside(): Promise<boolean> {
    let all = true;
    for (const [host, err] of this.#leftAlone) {
      if (!host.gaveUp || host.phase !== 'ready') continue;
      await this.#record(host, this.#d.frontier.dropHost(host), err).catch(() => (all = false));
    }
    return all;
  }

  /** Records URLs of a host left alone, with the reason, as errs records (due for a later run unless final). Throws what the mount throws. */
  async #record(host: HostState, items: readonly QueueItem[], err: RobotsUnavailable): Promise<void> {
    const { config, clock, store, stats } = this.#d;
    const failure = new FetchFailure(err.code, err.kind, `robots.txt unavailable: ${err.reason}`);
    const nowMs = clock.now();
    const written: ErrsRecord[] = [];
    for (const item of items) {
      const previous = host.errsOf(item.key);
      const attempts = attemptsAfterFailure(previous);
      const retryInMs = err.kind === 'final' ? undefined : nextRetryDelay(attempts, config, err.retryAfterMs);
      const record = buildErrsRecord({ ...item, hostDir: host.dir }, failure, previous, { nodeId: config.nodeId, nowMs, retryInMs });
      await store.writeErrs(host.dir, item.key, record);
      host.errsRecorded(item.key, record);
      written.push(record);
    }
    for (const record of written) stats.countError(failure.code, record.final);
  }
}
