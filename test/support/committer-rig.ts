import { Committer } from '../../src/commit/committer.js';
import type { Hooks } from '../../src/hooks/hooks.js';
import { silentLogger } from '../../src/progress/logger.js';
import { Reseeder } from '../../src/reseed/reseeder.js';
import { openDataDir } from '../../src/store/data-dir.js';
import { HostStore } from '../../src/store/host-store.js';
import { DEFAULT_NORMALIZE_OPTIONS } from '../../src/url/normalize.js';
import type { frontierRig } from './frontier-rig.js';

/**
 * A real data directory at `dir`, its HostStore, and a Committer over the frontier rig `r`,
 * with its Reseeder (`serverTime`: the mount's clock it sees; none: no listing settles).
 */
export async function committerRig(r: ReturnType<typeof frontierRig>, dir: string, hooks?: Hooks, serverTime?: () => { mtimeMs: number }) {
  const { layout } = await openDataDir(dir, 'n1');
  const reseeder = new Reseeder(layout, { clock: r.clock, serverTime: serverTime ?? (() => undefined) });
  const store = new HostStore(layout, { nodeId: 'n1', fsync: false });
  const committer = new Committer({
    config: r.cfg,
    clock: r.clock,
    log: silentLogger,
    stats: r.stats,
    layout,
    store,
    reseeder,
    frontier: r.frontier,
    admission: r.admission,
    normalize: DEFAULT_NORMALIZE_OPTIONS,
    hooks: hooks ?? [],
    hookEnv: { clock: r.clock, stats: r.stats, log: silentLogger, timeoutMs: 10_000 },
    onStored: () => undefined,
  });
  return { layout, store, committer, reseeder };
}
