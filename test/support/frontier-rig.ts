import { Ownership } from '../../src/cluster/ownership.js';
import { baseConfig, type CrawlConfig } from '../../src/config/crawl-config.js';
import { ALLOW_ALL } from '../../src/fetch/robots.js';
import { Admission } from '../../src/frontier/admission/admission.js';
import { Frontier } from '../../src/frontier/frontier.js';
import type { HostState } from '../../src/frontier/host-state.js';
import type { UrlPriority } from '../../src/hooks/url-priority.js';
import { ScopeFilter } from '../../src/frontier/scope.js';
import type { SpillRoom } from '../../src/frontier/spill-room.js';
import { CrawlStats } from '../../src/progress/stats.js';
import { FakeClock } from './fake-clock.js';

export function frontierConfig(over: Partial<CrawlConfig> = {}): CrawlConfig {
  return baseConfig('/nowhere', 'n1', { userAgent: 'test', delayMs: 0, perHost: 2, ...over });
}

/**
 * A frontier and its admission chain on a fake clock, with a runner that records what it is
 * told to start (as RequestRunner.pump does, with room for `room` requests).
 */
export function frontierRig(
  over: Partial<CrawlConfig> = {},
  opts: { seeds?: string[]; scope?: 'host' | 'any'; filter?: (url: string) => boolean; priority?: UrlPriority; spill?: SpillRoom } = {},
) {
  const cfg = frontierConfig(over);
  const clock = new FakeClock();
  const stats = new CrawlStats(() => clock.monotonic());
  const scope = new ScopeFilter(opts.scope ?? 'host', cfg.include, cfg.exclude);
  for (const s of opts.seeds ?? ['a.example', 'b.example']) scope.addSeed(s);
  const ownership = new Ownership('n1', 'host');
  const runner = { started: [] as string[], robots: [] as string[], room: Infinity, wakes: 0 };
  const pump = (): void => {
    while (runner.started.length < runner.room) {
      const next = frontier.next(clock.monotonic());
      if (next === undefined) return;
      if (next.kind === 'robots') runner.robots.push(next.host.dir);
      else {
        runner.started.push(next.item.url);
        next.host.beginRequest(clock.monotonic());
      }
    }
  };
  // The node's pump: this recording one, or a real RequestRunner's (usePump).
  let nodePump = pump;
  const usePump = (fn: () => void): void => {
    nodePump = fn;
  };
  const frontier = new Frontier({
    config: cfg,
    clock,
    stats,
    events: { workReady: () => nodePump(), wake: () => runner.wakes++ },
    ...(opts.spill === undefined ? {} : { spill: opts.spill }),
  });
  // Hosts wanted by admission (HostKeeper.hostWanted listens in a node); onHostWanted adds a listener.
  const adopted: string[] = [];
  let wanted = (_host: HostState): void => undefined;
  const onHostWanted = (fn: (host: HostState) => void): void => {
    wanted = fn;
  };
  const failures: unknown[] = [];
  const admission = new Admission({
    config: cfg,
    stats,
    scope,
    ownership,
    ...(opts.filter ? { filter: opts.filter, filterFailed: (err: unknown) => failures.push(err) } : {}),
    ...(opts.priority ? { priority: opts.priority } : {}),
    frontier,
    events: {
      hostWanted: (host) => {
        adopted.push(host.dir);
        wanted(host);
      },
    },
  });
  /** Makes a host ready to send (as HostKeeper does after its lease, listing and robots.txt). */
  const ready = (hostDir: string): HostState => {
    const host = frontier.hosts.get(hostDir)!;
    host.moveTo('ready');
    host.robotsKnown(ALLOW_ALL);
    frontier.schedule(host);
    return host;
  };
  return { cfg, frontier, admission, runner, stats, clock, adopted, ready, failures, usePump, onHostWanted };
}
