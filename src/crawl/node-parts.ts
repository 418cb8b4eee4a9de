import { HandoffExchange } from '../cluster/handoff-exchange.js';
import { Leases } from '../cluster/lease.js';
import { Membership } from '../cluster/membership.js';
import type { Ownership } from '../cluster/ownership.js';
import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { Fetcher } from '../fetch/fetcher.js';
import { RobotsCache } from '../fetch/robots.js';
import type { ScopeFilter } from '../frontier/scope.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import { openDataDir } from '../store/data-dir.js';
import { HostStore } from '../store/host-store.js';
import type { Layout } from '../store/layout.js';
import { NORMALIZATION_VERSION, type NormalizeOptions } from '../url/normalize.js';
import { Committer } from './committer.js';
import { Frontier } from './frontier.js';
import type { Hooks } from './hooks.js';
import { HostKeeper } from './host-keeper.js';
import { MountGuard } from './mount-guard.js';
import { reconcileNormalization } from './normalization.js';
import { RequestRunner } from './request-runner.js';
import { Reseeder } from './reseeder.js';

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
  readonly committer: Committer;
  readonly requests: RequestRunner;
  /** Hand-offs (docs/protocol.md), unless --no-handoff or --partition url. */
  readonly handoffs: HandoffExchange | undefined;
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
}

export interface NodeEnv {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly stats: CrawlStats;
  readonly fetcher: Fetcher;
  readonly scope: ScopeFilter;
  readonly ownership: Ownership;
  readonly hooks: Hooks | undefined;
  readonly control: NodeControl;
}

/**
 * Opens the data directory (creating it and its marker when needed, and taking the URL
 * normalization it was created with) and wires the parts of a node together.
 */
export async function assembleNode(env: NodeEnv): Promise<Parts> {
  const { config, clock, log, stats, control } = env;
  const { layout, marker } = await openDataDir(config.dataDir, config.nodeId, {
    version: NORMALIZATION_VERSION,
    sessionParams: [...config.normalize.sessionParams].sort(),
  });
  const normalize = reconcileNormalization(marker, config);
  const store = new HostStore(layout, { nodeId: config.nodeId, fsync: config.fsync });
  const membership = new Membership(layout, config, { clock });
  const leases = new Leases(layout, config.nodeId, (id) => membership.isAlive(id));
  const reseeder = new Reseeder(layout, { clock, serverTime: () => membership.serverTime });
  const robots = new RobotsCache(
    layout,
    env.fetcher,
    { userAgent: config.userAgent, maxAgeMs: config.robotsMaxAgeMs, nodeId: config.nodeId, fsync: config.fsync },
    clock,
  );
  const handoffs =
    config.handoff !== false && config.partition === 'host'
      ? new HandoffExchange({ layout, nodeId: config.nodeId, fsync: config.fsync, clock, ownership: env.ownership, scope: env.scope, stats })
      : undefined;
  const guard = new MountGuard({ dataDir: config.dataDir, retryMs: config.mountRetryMs, clock, log, layout, marker });
  const onStoreError = (err: unknown): void => control.onStoreError(err);
  const wake = (): void => control.wake();
  // The parts refer to each other; the ones made later are reached through these.
  let frontier: Frontier | undefined;
  let requests: RequestRunner | undefined;
  let committer: Committer | undefined;
  const keeper = new HostKeeper({
    config,
    clock,
    log,
    stats,
    ownership: env.ownership,
    membership,
    leases,
    store,
    robots,
    signal: () => requests!.signal,
    frontier: () => frontier!,
    onStoreError,
    wake,
  });
  const filter = env.hooks?.filter;
  frontier = new Frontier({
    config,
    clock,
    stats,
    scope: env.scope,
    ownership: env.ownership,
    ...(filter === undefined
      ? {}
      : {
          // A user's filter: one that throws keeps the URL (and is reported).
          filter: (url: string): boolean => {
            try {
              return filter(url) !== false;
            } catch (err) {
              committer!.hookFailed('filter', err);
              return true;
            }
          },
        }),
    adopt: (hostDir, url) => keeper.adopt(hostDir, url),
    starter: {
      mayStart: () => control.mayStart(),
      start: (host, item, now) => requests!.start(host, item, now),
      fetchRobots: (host) => requests!.fetchRobots(host),
      wake,
    },
  });
  committer = new Committer({
    config,
    clock,
    log,
    stats,
    layout,
    store,
    reseeder,
    frontier,
    normalize,
    hooks: env.hooks,
    handoffs,
    onStored: () => guard.stored(),
  });
  requests = new RequestRunner({
    config,
    clock,
    stats,
    fetcher: env.fetcher,
    scope: env.scope,
    ownership: env.ownership,
    normalize,
    store,
    committer,
    keeper,
    frontier: () => frontier!,
    fenced: () => control.fenced(),
    stopping: () => control.stopping(),
    onStoreError,
    idle: wake,
  });
  return { layout, normalize, store, membership, leases, reseeder, guard, keeper, frontier, committer, requests, handoffs };
}
