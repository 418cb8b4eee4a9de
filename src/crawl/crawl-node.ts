import type { Dispatcher } from 'undici';
import { Ownership } from '../cluster/ownership.js';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import { ExitCode } from '../errors.js';
import { Fetcher } from '../fetch/fetcher.js';
import { ScopeFilter } from '../frontier/scope.js';
import type { Logger } from '../progress/logger.js';
import { CrawlStats } from '../progress/stats.js';
import { WarcCapture } from '../warc/warc-capture.js';
import type { Hooks } from '../hooks/hooks.js';
import { DiscoveryRounds } from './discovery-rounds.js';
import { Heartbeat } from './heartbeat.js';
import { joinCrawl } from './node-join.js';
import { assembleNode, type Parts } from './node-parts.js';
import { shutDownNode } from './node-shutdown.js';
import { NodeFaults, internalStop } from './node-faults.js';
import type { LiveSettings } from '../config/live-settings.js';
import { NodeControl } from './node-control.js';
import type { HostErrs } from '../store/errs-tally.js';
import type { MountFs } from '../store/mount-fs.js';
import { Mount } from '../store/mount.js';
import { nodeMountFs } from '../store/node-mount-fs.js';
import { WakeableSleep } from '../util/wakeable-sleep.js';

/** What a node's run came to. */
export interface RunResult {
  /** `complete`: every node idle and nothing left; `max-pages`: the limit was reached. */
  readonly reason: 'complete' | 'max-pages' | 'stopped' | 'mount-failed';
  readonly exitCode: number;
  /** For a failure, one line starting with its CODE. */
  readonly message?: string;
}

export interface CrawlNodeDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  /** HTTP dispatcher for tests; default: the fetcher's own undici Agent. */
  readonly dispatcher?: Dispatcher;
  /** The fetcher itself (a test's or a simulation's site); default: one over `dispatcher`. */
  readonly fetcher?: Fetcher;
  /** The data directory's file system; default: the real one. On another, no threads help the node and --warc is refused (Mount.native). */
  readonly fs?: MountFs;
  /** Random source of the ids the node writes (lease tokens, the marker's id); default: crypto's UUIDs. */
  readonly random?: () => number;
  readonly stats?: CrawlStats;
  /** The user's --hook module, if any. */
  readonly hooks?: Hooks;
  readonly live?: LiveSettings | undefined; // the crawl's settings as `config set` changes them, read at each beat
}

/** CrawlNode.endedAs. */
export interface EndedAs {
  readonly state: string;
  readonly departed: readonly string[];
}

/**
 * One crawling node (docs/architecture.md): the control loop of rounds and reseeds; the heartbeat
 * (heartbeat.ts) keeps membership, leases and ownership current, the termination rule
 * (termination.ts) says when the crawl is over. It runs alone, as one of `--processes N`, or as
 * one of many machines on a mount. Its parts: Frontier (queues, politeness, dispatch), HostKeeper
 * (leases, listings, robots.txt, handover), Committer (records), MountGuard (faults of the mount),
 * Reseeder (the mount's links).
 */
export class CrawlNode {
  readonly stats: CrawlStats;
  readonly #config: CrawlConfig;
  readonly #clock: Clock;
  readonly #mount: Mount;
  readonly #log: Logger;
  readonly #fetcher: Fetcher;
  readonly #scope: ScopeFilter;
  readonly #ownership: Ownership;
  readonly #hooks: Hooks | undefined;
  readonly #warc: WarcCapture | undefined;
  #p: Parts | undefined;
  #stopping: RunResult | undefined;
  #heldErrs: ReadonlyMap<string, HostErrs> | undefined;
  #endedAs: EndedAs | undefined;
  /** The control loop's sleep, which what it must act on cuts short. */
  readonly #sleeper: WakeableSleep;
  #heartbeat: Heartbeat | undefined;
  #rounds: DiscoveryRounds | undefined;
  #faults: NodeFaults | undefined;
  /** The control file: stop, pause, drain (docs/operations.md, "Stopping, pausing, draining"). */
  readonly #control: NodeControl;

  constructor(config: CrawlConfig, deps: CrawlNodeDeps) {
    this.#config = config;
    this.#clock = deps.clock;
    this.#sleeper = new WakeableSleep(deps.clock);
    this.#log = deps.logger;
    this.stats = deps.stats ?? new CrawlStats(() => deps.clock.monotonic());
    this.#mount = new Mount(deps.fs ?? nodeMountFs, deps.clock, deps.random);
    if (config.warc && !this.#mount.native) throw new Error('--warc writes with the real file system only');
    this.#warc = config.warc ? WarcCapture.forNode(config, deps.clock, deps.logger) : undefined;
    const dispatcher = deps.dispatcher ? { dispatcher: deps.dispatcher } : {};
    this.#fetcher = deps.fetcher ?? new Fetcher(config, { clock: deps.clock, capture: this.#warc, ...dispatcher });
    this.#scope = new ScopeFilter(config.scope, config.include, config.exclude);
    this.#ownership = new Ownership(config.nodeId, config.partition);
    this.#hooks = deps.hooks;
    const controlDeps = { mount: this.#mount, config, log: deps.logger, live: deps.live };
    this.#control = new NodeControl(controlDeps, { stop: (why) => this.stop(ExitCode.OK, why), changed: () => this.#controlChanged() });
  }

  /** Paused or resumed by the control file: the state is said by the beat that read it. */
  #controlChanged(): void {
    if (this.#control.paused) this.stats.state = 'paused';
    this.#sleeper.wake();
    this.#p?.requests.pump();
  }

  /** Directory names of the hosts this node owns and crawls now. */
  ownedHosts(): string[] {
    return [...(this.#p?.frontier.hosts.values() ?? [])].filter((h) => h.phase === 'ready').map((h) => h.dir);
  }

  /** Asks the node to stop gracefully: requests in flight finish (or are abandoned after a grace period). */
  stop(exitCode: number = ExitCode.INTERRUPTED, message?: string): void {
    this.#noteEnd();
    this.#stopping ??= { reason: 'stopped', exitCode, ...(message === undefined ? {} : { message }) };
    this.#sleeper.wake();
  }

  /** Looks at the other nodes now rather than at the next heartbeat (a sibling said it changed). */
  look(): void {
    this.#heartbeat?.beatSoon();
  }

  /** Runs the node until the crawl is complete, a limit is reached, or it is stopped. */
  async run(): Promise<RunResult> {
    const p = await this.#open();
    let result: RunResult | undefined;
    try {
      result = (await this.#startUp(p)) ?? (await this.#loop(p));
      return result;
    } finally {
      this.#noteEnd();
      this.#heldErrs = await shutDownNode(p, result?.reason === 'complete', {
        log: this.#log,
        stats: this.stats,
        ownership: this.#ownership,
        heartbeat: this.#heartbeat!,
        fetcher: this.#fetcher,
        warc: this.#warc,
        maxAttempts: this.#config.maxAttempts,
        fenced: () => this.#fenced(),
      });
    }
  }

  /**
   * Joins the crawl (node-join.ts); a failure of the mount on the way is waited out as in the loop
   * (--mount-retry, then exit MOUNT) and the join starts again: every step of it may be
   * repeated. Returns a result when the node must stop before it crawls.
   */
  async #startUp(p: Parts): Promise<RunResult | undefined> {
    return this.#faults!.retry(async () => {
      await this.#control.begin(); // before the node's first record: a stop given later is for it
      return joinCrawl(p, {
        config: this.#config,
        clock: this.#clock,
        log: this.#log,
        ownership: this.#ownership,
        heartbeat: this.#heartbeat!,
      });
    });
  }

  /** Opens the data directory and builds the parts that use it. */
  async #open(): Promise<Parts> {
    this.#p = await assembleNode({
      config: this.#config,
      clock: this.#clock,
      mount: this.#mount,
      log: this.#log,
      stats: this.stats,
      fetcher: this.#fetcher,
      scope: this.#scope,
      ownership: this.#ownership,
      hooks: this.#hooks,
      warc: this.#warc,
      control: {
        mayStart: () => this.#mayStart(),
        fenced: () => this.#fenced(),
        stopping: () => this.#stopping !== undefined,
        onStoreError: (err) => this.#onStoreError(err),
        wake: () => this.#sleeper.wake(),
        pump: () => this.#p?.requests.pump(),
      },
    });
    this.#heartbeat = new Heartbeat({
      config: this.#config,
      clock: this.#clock,
      log: this.#log,
      stats: this.stats,
      ownership: this.#ownership,
      parts: this.#p,
      events: {
        stopping: () => this.#stopping !== undefined,
        draining: () => this.#control.draining,
        lookAtControl: () => this.#control.look(),
        needFullReseed: () => this.#p!.reseeder.wantFull(),
        leftDone: (before, done, lent) => this.#rounds!.leftDone(before, done, lent),
        wake: () => this.#sleeper.wake(),
        onStoreError: (err) => this.#onStoreError(err),
      },
    });
    this.#rounds = new DiscoveryRounds({
      config: this.#config,
      clock: this.#clock,
      log: this.#log,
      stats: this.stats,
      scope: this.#scope,
      parts: this.#p,
      heartbeat: this.#heartbeat,
      sleep: (ms) => this.#sleeper.sleep(ms),
      fenced: () => this.#fenced(),
      onStoreError: (err) => this.#onStoreError(err),
    });
    this.#faults = new NodeFaults({
      config: this.#config,
      ownership: this.#ownership,
      heartbeat: this.#heartbeat,
      parts: this.#p,
      stopping: () => this.#stopping,
      sleep: (ms) => this.#sleeper.sleep(ms),
    });
    return this.#p;
  }

  /** True when this node has not reached the mount for long enough that others may count it dead. */
  #fenced(): boolean {
    return this.#heartbeat?.fenced() ?? false;
  }

  // ---- the control loop -------------------------------------------------------------------

  async #loop(p: Parts): Promise<RunResult> {
    for (;;) {
      if (this.#stopping) return this.#stopping;
      if (p.guard.fault) {
        const failed = await this.#faults!.waitOut();
        if (failed) return failed;
        continue;
      }
      if (this.#control.paused) {
        this.stats.state = 'paused';
        await this.#sleeper.sleep(this.#config.heartbeatMs);
        continue;
      }
      if (p.requests.fetched >= this.#config.maxPages) {
        await p.requests.drain(Infinity);
        return { reason: 'max-pages', exitCode: ExitCode.OK, message: `--max-pages ${this.#config.maxPages} reached` };
      }
      if (this.#rounds!.busy()) {
        await this.#rounds!.whileBusy();
        continue;
      }
      if ((await this.#rounds!.idleStep()) === 'complete') return { reason: 'complete', exitCode: ExitCode.OK };
    }
  }

  #mayStart(): boolean {
    const p = this.#p;
    if (this.#stopping || p === undefined || p.guard.fault || this.#fenced() || this.#control.paused) return false;
    if (p.requests.fetched >= this.#config.maxPages) {
      this.#sleeper.wake();
      return false;
    }
    return p.requests.inFlight < this.#config.concurrency;
  }

  // ---- faults -----------------------------------------------------------------------------

  /** A failure of the mount stops fetching (MountGuard); anything else is a bug and ends the run. */
  #onStoreError(err: unknown): void {
    if (this.#p?.guard.classify(err) === undefined) this.#stopping = internalStop(err, this.#log, this.#stopping);
    this.#sleeper.wake();
  }

  /**
   * How this node stood when it was asked to stop or its run ended, before it shut down (src/cli/run-outcome.ts
   * recordRunEnd): its state then, and the nodes it had seen leave while it still worked (their work came to it).
   */
  get endedAs(): EndedAs {
    return this.#endedAs ?? { state: this.stats.state, departed: [] };
  }

  #noteEnd(): void {
    this.#endedAs ??= { state: this.stats.state, departed: this.#p?.membership.departedIds() ?? [] };
  }

  /** After run(): the errs records of the hosts it held to the end, for the end summary (node-shutdown.ts errsOfHostsHeld). */
  get heldErrs(): ReadonlyMap<string, HostErrs> | undefined {
    return this.#heldErrs;
  }
}
