import { tmpdir } from 'node:os';
import { HandoffExchange } from '../cluster/handoff-exchange.js';
import { Leases } from '../cluster/lease.js';
import { Membership } from '../cluster/membership.js';
import type { Ownership } from '../cluster/ownership.js';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { Fetcher } from '../fetch/fetcher.js';
import { RobotsCache } from '../fetch/robots.js';
import { HostRobots } from './host-robots.js';
import { Admission } from '../frontier/admission/admission.js';
import { Frontier } from '../frontier/frontier.js';
import { SpillRoom } from '../frontier/spill-room.js';
import type { ScopeFilter } from '../frontier/scope.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import { openDataDir } from '../store/data-dir.js';
import { DirHandles } from '../store/dir-handles.js';
import { WriteThread } from '../store/write-thread.js';
import { ExtractThread } from '../extract/extract-thread.js';
import { HostStore } from '../store/host-store.js';
import type { Layout } from '../store/layout.js';
import type { Mount } from '../store/mount.js';
import { NORMALIZATION_VERSION, type NormalizeOptions } from '../url/normalize.js';
import { Committer } from '../commit/committer.js';
import { fetchMiddleware } from '../hooks/builtin-steps.js';
import type { HookCallEnv } from '../hooks/hook-call.js';
import { hookFailed, type Hooks } from '../hooks/hooks.js';
import { urlPriority } from '../hooks/url-priority.js';
import { HostKeeper } from './host-keeper.js';
import { MountGuard } from './mount-guard.js';
import { reconcileNormalization } from './normalization.js';
import { RequestRunner } from './request-runner.js';
import { Reseeder } from '../reseed/reseeder.js';
import { Recrawler } from '../recrawl/recrawler.js';
import { SummaryWriter } from './summary-writer.js';
import { Sitemaps, hasSitemapSeeds } from '../sitemap/sitemaps.js';

/** The parts of a node that exist once its data directory is open. */
export interface Parts {
  readonly layout: Layout;
  readonly normalize: NormalizeOptions;
  readonly store: HostStore;
  readonly membership: Membership;
  readonly leases: Leases;
  readonly reseeder: Reseeder;
  readonly guard: MountGuard;
  readonly keeper: HostKeeper;
  readonly frontier: Frontier;
  readonly admission: Admission;
  readonly committer: Committer;
  readonly requests: RequestRunner;
  /** Hosts' robots.txt, and the hosts left alone for this run (HostRobots.recordSetAside at the exit). */
  readonly hostRobots: HostRobots;
  /** Finds the links of HTML pages in a thread, when the process has a core for it (ExtractThread). */
  readonly extractor: ExtractThread | undefined;
  /** Hand-offs (docs/protocol.md), unless --no-handoff or --partition url. */
  readonly handoffs: HandoffExchange | undefined;
  /** Revisits (--recrawl-after); undefined without. */
  readonly recrawler: Recrawler | undefined;
  /** Host summaries (docs/protocol.md), written by a host's lease holder; not with --recrawl-after or --partition url. */
  readonly summaries: SummaryWriter | undefined;
}

/** What the parts ask of the node that runs them. */
export interface NodeControl {
  /** True while another request may start. */
  mayStart(): boolean;
  /** True when results may not be written: the node may be counted dead (no heartbeat). */
  fenced(): boolean;
  stopping(): boolean;
  /** A failed operation on the mount (or a bug). */
  onStoreError(err: unknown): void;
  /** Wakes the control loop. */
  wake(): void;
  /** Work may start: the node starts what may (RequestRunner.pump). */
  pump(): void;
}

export interface NodeEnv {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  /** The data directory's file system as this node uses it (the real one in a crawl). */
  readonly mount: Mount;
  readonly log: Logger;
  readonly stats: CrawlStats;
  readonly fetcher: Fetcher;
  readonly scope: ScopeFilter;
  readonly ownership: Ownership;
  readonly hooks: Hooks | undefined;
  readonly control: NodeControl;
  /** --warc: the WARC capture the committer flushes. */
  readonly warc?: { flush(): Promise<void> } | undefined;
}

/**
 * Opens the data directory (creating it and its marker when needed, and taking the URL
 * normalization it was created with) and wires the parts of a node together.
 */
export async function assembleNode(env: NodeEnv): Promise<Parts> {
  const { config, clock, log, stats, control, mount } = env;
  const since = clock.monotonic(); // before this node's first file on the mount (SelfRecordDeps.since)
  const normalization = { version: NORMALIZATION_VERSION, sessionParams: [...config.normalize.sessionParams].sort() };
  const { layout, marker } = await openDataDir(config.dataDir, config.nodeId, normalization, mount);
  const normalize = reconcileNormalization(marker, config);
  // The open directories and the write thread work on the real file system only (Mount.native).
  const store = new HostStore(layout, {
    nodeId: config.nodeId,
    fsync: config.fsync,
    dirs: mount.native ? await DirHandles.forDataDir(config.dataDir) : undefined,
    thread: mount.native ? await WriteThread.forDataDir(config.dataDir, { fsync: config.fsync }) : undefined,
  });
  // A node that may have been counted dead reads everything again (docs/protocol.md, "Self-fencing").
  const membership = new Membership(layout, config, { clock, since, onSilence: () => reseeder.wantFull() });
  const leases = new Leases(layout, config.nodeId, (id) => membership.isAlive(id), membership);
  const reseeder = new Reseeder(layout, { clock, serverTime: () => membership.serverTime, summaries: config.recrawl === undefined });
  const robots = new RobotsCache(
    layout,
    { userAgent: config.userAgent, maxAgeMs: config.robotsMaxAgeMs, nodeId: config.nodeId, fsync: config.fsync },
    clock,
  );
  const handoffs =
    config.handoff !== false && config.partition === 'host'
      ? new HandoffExchange({
          layout,
          nodeId: config.nodeId,
          fsync: config.fsync,
          clock,
          ownership: env.ownership,
          scope: env.scope,
          stats,
        })
      : undefined;
  const guard = new MountGuard({ dataDir: config.dataDir, retryMs: config.mountRetryMs, clock, log, layout, marker });
  // Each part is made after the parts it calls; a part tells the node (control) what the
  // node must act on, and only the node starts requests (RequestRunner.pump).
  const abort = new AbortController();
  const frontier = new Frontier({
    config,
    clock,
    stats,
    events: { workReady: () => control.pump(), wake: () => control.wake() },
    spill: new SpillRoom(config.spillDir ?? tmpdir()),
  });
  const recrawler =
    config.recrawl === undefined ? undefined : new Recrawler({ config, policy: config.recrawl, clock, log, layout, frontier });
  // Sitemaps (docs/sitemaps.md) when any were asked for; sitemaps/ on the mount may hold other nodes' --sitemap URLs.
  const sitemaps: Sitemaps | undefined =
    config.sitemapsFromRobots === true || (config.sitemapUrls ?? []).length > 0 || (await hasSitemapSeeds(layout))
      ? new Sitemaps({
          layout,
          clock,
          log,
          normalize,
          fromRobots: config.sitemapsFromRobots === true,
          recrawler,
          offer: (u: string, h: string, d: number): unknown => offerQuietly(admission, u, h, d, control),
        })
      : undefined;
  const summaries =
    config.partition === 'host' && config.recrawl === undefined
      ? new SummaryWriter({ layout, clock, log, nodeId: config.nodeId, fsync: config.fsync })
      : undefined;
  const keeper = new HostKeeper({
    recrawler,
    summaries,
    sitemaps,
    config,
    clock,
    log,
    stats,
    ownership: env.ownership,
    membership,
    leases,
    store,
    robots,
    frontier,
    onStoreError: (err) => control.onStoreError(err),
    wake: () => control.wake(),
    reseeder,
  });
  const hooks = env.hooks ?? [];
  const hookEnv: HookCallEnv = { clock, stats, log, timeoutMs: config.hookTimeoutMs };
  const filters = hooks.filter((m) => m.filter !== undefined);
  const priority = urlPriority(hooks, hookEnv);
  const admission = new Admission({
    config,
    stats,
    scope: env.scope,
    ownership: env.ownership,
    ...(filters.length === 0
      ? {}
      : {
          filter: (url: string) => filters.every((m) => m.filter!(url)),
          filterFailed: (err: unknown) => hookFailed({ stats, log }, 'filter', err),
        }),
    ...(priority === undefined ? {} : { priority }),
    frontier,
    events: { hostWanted: (host) => keeper.hostWanted(host) },
  });
  const committer = new Committer({
    config,
    clock,
    log,
    stats,
    layout,
    store,
    reseeder,
    frontier,
    admission,
    normalize,
    hooks,
    hookEnv,
    handoffs,
    recrawler,
    summaries,
    onStored: () => guard.stored(),
    warc: env.warc,
  });
  // The fetch middleware of every request: the built-in steps first (docs/hooks.md), then the --hook ones.
  const middleware = fetchMiddleware(
    config.userAgent,
    (hostDir, url) => frontier.hosts.get(hostDir)?.robots?.isAllowed(url) ?? true,
    () => clock.now(),
    { hooks, env: hookEnv },
    { ...(config.headers ? { headers: config.headers } : {}), ...(config.cookies ? { cookies: config.cookies } : {}) },
  );
  const hostRobots = new HostRobots({
    config,
    clock,
    log,
    stats,
    store,
    robots,
    pipeline: { fetcher: env.fetcher, middleware, signal: abort.signal, sent: (status) => stats.countRequest(status) },
    frontier,
    sitemaps,
    onStoreError: (err) => control.onStoreError(err),
    wake: () => control.wake(),
    fenced: () => control.fenced(),
  });
  // This machine's nodes of the crawl: this one and the siblings of --processes N.
  // Only on the real file system: a node on another one (a simulation) runs on its main thread alone.
  const extractor = mount.native ? ExtractThread.forProcesses(normalize, (config.startPeers ?? 0) + 1) : undefined;
  const requests = new RequestRunner({
    config,
    clock,
    stats,
    fetcher: env.fetcher,
    admission,
    ownership: env.ownership,
    normalize,
    extractor,
    store,
    committer,
    keeper,
    frontier,
    abort,
    control,
    middleware,
    hostRobots,
    recrawler,
    sitemaps,
  });
  return {
    layout,
    normalize,
    store,
    membership,
    leases,
    reseeder,
    guard,
    keeper,
    frontier,
    admission,
    committer,
    requests,
    hostRobots,
    extractor,
    handoffs,
    recrawler,
    summaries,
  };
}

/**
 * A sitemap's URL offered through the one way in (Admission.offerRanked, which applies the
 * --hook priority); its result is not waited for, so a failure is the node's to handle.
 */
function offerQuietly(admission: Admission, url: string, hostDir: string, depth: number, control: NodeControl): unknown {
  const r = admission.offerRanked(url, hostDir, depth);
  if (typeof r !== 'string') r.catch((err: unknown) => control.onStoreError(err));
  return r;
}
