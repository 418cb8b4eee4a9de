import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { ScopeFilter } from '../frontier/scope.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import type { ReseedScope } from '../reseed/reseeder.js';
import type { ReseedSink } from '../reseed/reseed-sink.js';
import { normalizeUrl } from '../url/normalize.js';
import { countDiscovery } from '../cluster/handoff-stats.js';
import { HANDOFF_FLUSH_MS, HANDOFF_POLL_MS, type HandoffFrontier } from '../cluster/handoff-exchange.js';
import { DoneLeavers } from '../cluster/done-leavers.js';
import type { Heartbeat } from './heartbeat.js';
import { HELD_WAIT_HEARTBEATS, loadedOrHeld } from './held-hosts.js';
import type { Parts } from './node-parts.js';
import { nothingInHand, nothingLeft } from './work-left.js';
import { WATCH_POLL_MS, afterEmptyReseed, peersStill } from './termination.js';

/** Under --watch, how often a reseed stats every directory of the hosts this node owns (#reseedScope). */
const OWN_SWEEP_MS = 60_000;

export interface DiscoveryDeps {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly stats: CrawlStats;
  readonly scope: ScopeFilter;
  readonly parts: Parts;
  readonly heartbeat: Heartbeat;
  /** The node's sleep: `ms` on its clock, or until the node is woken. */
  sleep(ms: number): Promise<void>;
  /** True when this node has not reached the mount for long enough that others may count it dead. */
  fenced(): boolean;
  /** A failed operation on the mount (or a bug). */
  onStoreError(err: unknown): void;
}

/**
 * A node's discovery rounds (docs/protocol.md, "Rounds, reseeds and the end of the crawl"):
 * while requests run, the hand-offs in and out; when nothing is in memory, the retries due,
 * then a reseed of the mount (and the hand-offs), and the end rule (termination.ts) when it
 * found nothing. CrawlNode runs them from its control loop.
 */
export class DiscoveryRounds {
  readonly #d: DiscoveryDeps;
  /** Monotonic time the last reseed began (--watch reseeds while visits wait). */
  #lastReseed = -Infinity;
  /** The view this node last said it settled in (NodeRecord.settled): published once, at once. */
  #settledIn: string | undefined;
  /** Monotonic time the last reseed looked at every owned directory (#reseedScope). */
  #lastOwnSweep = -Infinity;
  /** Hosts gained from nodes that left done (docs/protocol.md, "Leaving done"). */
  readonly #leftDone = new DoneLeavers();
  /** #sayWhyNothing spoke. */
  #saidWhy = false;

  constructor(deps: DiscoveryDeps) {
    this.#d = deps;
  }

  /** Nodes left done (DoneLeavers.left): the hosts this node gains from them are quiet. */
  leftDone(before: readonly string[], done: readonly string[], lent: ReadonlyMap<string, string>): void {
    this.#leftDone.left(before, done, lent);
  }

  /** One turn of the control loop while requests run: the hand-offs, or a pause. */
  async whileBusy(): Promise<void> {
    const p = this.#d.parts;
    this.#d.stats.state = 'crawling';
    if (p.handoffs === undefined) await this.#d.sleep(1_000);
    else await this.#exchangeWhileBusy(p);
  }

  /**
   * One turn of the control loop with nothing in flight or queued: waits for a retry due,
   * refills due visits, or reseeds; `complete` when the crawl is over by the end rule.
   */
  async idleStep(): Promise<'complete' | undefined> {
    const p = this.#d.parts;
    const retryAt = p.frontier.nextRetryAt();
    // With --watch, visits due later (docs/recrawl.md) do not stop the reseeds for new work.
    const now = this.#d.clock.monotonic();
    const watch = this.#d.config.watch;
    const pollGap = Math.max(this.#d.config.heartbeatMs, WATCH_POLL_MS);
    if (retryAt < Infinity && (!watch || retryAt - now < pollGap || now - this.#lastReseed < pollGap)) {
      this.#d.stats.state = 'waiting';
      const until = watch ? Math.min(retryAt, this.#lastReseed + pollGap) : retryAt;
      await this.#d.sleep(Math.max(10, until - now));
      return undefined;
    }
    // Due pages that did not fit under --frontier-cap come before the mount (docs/recrawl.md).
    if ((p.recrawler?.refill() ?? 0) > 0) return undefined;
    // Nothing in memory: look at the mount.
    const allIdleBefore = p.membership.allIdleSince();
    const peersWroteAfter = p.membership.peersWroteAfter();
    const viewBefore = p.membership.view().key;
    const reseedStart = this.#d.clock.monotonic();
    this.#lastReseed = reseedStart;
    const full = p.reseeder.fullDue; // asked (the first reseed with hand-offs; hosts gained) until one ends
    if (full) this.#leftDone.forget();
    let found: number;
    let unsent: boolean;
    try {
      // Hand-offs (docs/protocol.md): everything found goes out before this node may say
      // it is idle; what was sent to it comes in with the reseed.
      let handed = 0;
      if (p.handoffs !== undefined) {
        // A file sent now is work for its owner, who may have been seen idle before: this
        // reseed then has not "found nothing". Counted by any flush that wrote it (one the
        // heartbeat started may write this node's batches while this one waits for it).
        const writtenBefore = p.handoffs.outbox.written;
        await p.handoffs.outbox.flush();
        handed += p.handoffs.outbox.written - writtenBefore;
        // A reseed that may end the crawl lists the inboxes fresh: a listing cached from
        // before a peer's last hand-off would hide it (docs/protocol.md, "Hand-offs").
        const fresh = allIdleBefore !== undefined && !this.#d.config.watch;
        const h = await p.handoffs.receive(this.#handoffTarget(p), { live: p.membership.liveIds(), afterLeaving: full, fresh });
        handed += h.queued + h.forwarded;
      }
      const cpu = process.cpuUsage();
      const r = await p.reseeder.reseed(this.#sink(p, full), full, this.#reseedScope(p, allIdleBefore, reseedStart));
      countDiscovery(this.#d.stats, cpu, 'reseed', r.recordsRead);
      // Batches still waiting to be written (links forwarded now, or sent on by the heartbeat
      // meanwhile) are work too: the next reseed writes them, and this node may not end, nor
      // say idle, before it has (docs/protocol.md, "Hand-offs").
      found = r.queued + handed;
      unsent = p.handoffs?.outbox.waiting === true;
      if (r.queued > 0) this.#d.log.debug('reseed', { round: this.#d.stats.round + 1, ...r, full });
    } catch (err) {
      this.#d.onStoreError(err);
      return undefined;
    }
    const work = { queued: p.frontier.queued, inFlight: p.requests.inFlight, found, unsent, nextRetryAt: p.frontier.nextRetryAt() };
    if (!nothingLeft(work)) {
      this.#d.stats.round++;
      this.#d.stats.state = 'crawling';
      p.membership.setState('crawling');
      return undefined;
    }
    const wasIdle = this.#d.stats.state === 'idle';
    this.#d.stats.state = 'idle';
    p.membership.setState('idle');
    // Begun after every live node was seen idle, in a view that did not move meanwhile: this
    // node says it read its inbox in that view (NodeRecord.settled), at once, peers wait for it.
    const view = p.membership.view();
    const settled = allIdleBefore !== undefined && allIdleBefore < reseedStart && view.key === viewBefore;
    if (settled) p.membership.setState('idle', view.key);
    if (settled && this.#settledIn !== view.key) this.#d.heartbeat.beatSoon();
    this.#settledIn = settled ? view.key : undefined;
    const step = afterEmptyReseed({
      watch: this.#d.config.watch,
      allIdleBefore,
      reseedStart,
      peersWroteAfter,
      peersSettled: settled && view.peersSettled,
      observations: p.membership.observations,
      wasIdle,
      allIdleNow: p.membership.allIdleSince() !== undefined,
      alone: p.membership.livePeers().length === 0,
      heartbeatMs: this.#d.config.heartbeatMs,
    });
    if (step.kind === 'complete') {
      // Hosts came this node's way during this reseed (the live set changed): the next one, at once, is full.
      if (p.reseeder.fullDue) return undefined;
      if (p.handoffs === undefined || (await peersStill(p.membership))) return 'complete';
      // A peer ended done, or moved, since it was last seen: look again, then reseed (its
      // inbox may hold what this node sent it before it knew).
      this.#d.heartbeat.beatSoon();
      await this.#d.sleep(this.#d.config.heartbeatMs);
      return undefined;
    }
    if (!wasIdle) this.#sayWhyNothing(p);
    if (!wasIdle && this.#d.config.watch) {
      this.#d.log.info(`nothing to do: waiting for seeds (add some with \`mountcrawl seed URL --data ${this.#d.config.dataDir}\`)`);
    }
    // Peers wait for this node's idle record: publish it now, not at the next heartbeat.
    if (step.publishIdle) this.#d.heartbeat.beatSoon();
    if (step.kind === 'wait') await this.#idleWait(p, step.ms);
    return undefined;
  }

  /**
   * An idle node's wait between reseeds (docs/protocol.md, "Hand-offs", Receiving): with
   * hand-offs and outside --watch it lists its inbox every HANDOFF_POLL_MS and ends the wait
   * when a file came (a lend, or links of its hosts), so that its free slots take the work
   * within a fraction of a heartbeat.
   */
  async #idleWait(p: Parts, ms: number): Promise<void> {
    const { clock, config } = this.#d;
    if (p.handoffs === undefined || config.watch) return this.#d.sleep(ms);
    const end = clock.monotonic() + ms;
    for (let left = ms; left > 0; left = end - clock.monotonic()) {
      const step = Math.min(left, HANDOFF_POLL_MS);
      const before = clock.monotonic();
      await this.#d.sleep(step);
      if (clock.monotonic() - before < step) return; // woken
      if (await p.handoffs.inbox.hasFiles()) return;
    }
  }

  /**
   * The first time a node that has never held a host turns idle while peers crawl, it says why
   * once (docs/protocol.md, "Lending hosts"): hashing gave every host to its peers.
   */
  #sayWhyNothing(p: Parts): void {
    const { config, stats, log } = this.#d;
    const peers = p.membership.livePeers().length;
    if (this.#saidWhy || stats.pages > 0 || p.frontier.hosts.size > 0 || peers === 0 || config.partition !== 'host') return;
    this.#saidWhy = true;
    const lend =
      config.lend === false || p.handoffs === undefined ? 'lending is off, so it fetches nothing' : 'it crawls the hosts they lend it';
    log.warn(
      `this node owns no host: rendezvous hashing gave each host of this crawl to its ${peers} peer(s) (one node per host); ${lend}`,
    );
  }

  /**
   * While requests run (docs/protocol.md, "Hand-offs"): writes the batches of links found for
   * other nodes, and, with room for more requests, reads what others sent to this node, so
   * that it learns of its hosts' new URLs within a fraction of a second, not at the end of
   * its round.
   */
  async #exchangeWhileBusy(p: Parts): Promise<void> {
    const h = p.handoffs!;
    try {
      // A batch for a node with slots to spare goes at once: it waits for work.
      const waits = (): boolean => [...h.outbox.owners()].some((id) => (p.membership.recordOf(id)?.spare ?? 0) > 0);
      if (h.outbox.due(HANDOFF_FLUSH_MS) || (h.outbox.pending > 0 && waits())) await h.outbox.flush();
      if (p.requests.inFlight < this.#d.config.concurrency && !this.#d.fenced() && !p.guard.fault) {
        const r = await h.receive(this.#handoffTarget(p));
        if (r.queued > 0) p.requests.pump();
      }
    } catch (err) {
      this.#d.onStoreError(err);
    }
    await this.#d.sleep(HANDOFF_POLL_MS);
  }

  /** Where received hand-offs go: the admission chain, with the hosts as the frontier holds them. */
  #handoffTarget(p: Parts): HandoffFrontier {
    return { offer: (url, hostDir, depth, referrer) => p.admission.offerRanked(url, hostDir, depth, referrer), hosts: p.frontier.hosts };
  }

  /** True while something is queued or in flight (queued includes hosts waiting for a lease, a listing or robots.txt). */
  busy(): boolean {
    const p = this.#d.parts;
    return !nothingInHand({ queued: p.frontier.queued, inFlight: p.requests.inFlight });
  }

  /**
   * Which directories a reseed looks at (ReseedScope, docs/protocol.md "Rounds, reseeds and
   * the end of the crawl"). With hand-offs, one that may end the crawl (every live node was
   * seen idle before it began) stats every directory of the hosts this node owns, so the
   * end is decided on everything on the mount; the others (peers still busy) look only at
   * the directories this node has a reason to look at, so an idle node does not stat
   * thousands of directories a second. Under --watch nothing ends the crawl: every
   * OWN_SWEEP_MS a reseed looks at them all.
   */
  #reseedScope(p: Parts, allIdleBefore: number | undefined, now: number): ReseedScope {
    if (p.handoffs === undefined) return 'all';
    const sweep = this.#d.config.watch ? now - this.#lastOwnSweep >= OWN_SWEEP_MS : allIdleBefore !== undefined;
    if (!sweep) return 'own-unsettled';
    this.#lastOwnSweep = now;
    return 'own';
  }

  /** The node as the reseeder sees it; a `full` reseed waits a little for hosts peers still hold (held-hosts.ts). */
  #sink(p: Parts, full: boolean): ReseedSink {
    const heldUntil = full ? this.#d.clock.monotonic() + HELD_WAIT_HEARTBEATS * this.#d.config.heartbeatMs : 0;
    return {
      wantsHost: (hostDir) => p.admission.wantsHost(hostDir),
      // Hosts are taken a few at a time (HostKeeper); each host's records are scanned once it
      // is, so the first requests start while the rest are taken (docs/protocol.md, "Host summaries").
      prepareHosts: async (hostDirs) => {
        for (const dir of hostDirs) p.admission.want(dir);
      },
      hostLoaded: (hostDir) => loadedOrHeld(p.keeper, p.frontier.hosts.get(hostDir), this.#d.clock, heldUntil),
      addSeed: (raw) => {
        const r = normalizeUrl(raw, undefined, p.normalize);
        if (!r.ok) {
          this.#d.log.warn('ignoring a seed that is not a crawlable URL', { seed: raw.slice(0, 200), reason: r.reason });
          return undefined;
        }
        this.#d.scope.addSeed(r.hostDir);
        return { url: r.url, hostDir: r.hostDir };
      },
      offer: (url, hostDir, depth, referrer) => p.admission.offerRanked(url, hostDir, depth, referrer),
      saturated: () => p.requests.inFlight >= this.#d.config.concurrency,
      quiet: (hostDir) => this.#leftDone.isQuiet(hostDir),
    };
  }
}
