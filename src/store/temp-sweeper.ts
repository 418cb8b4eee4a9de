import { join } from 'node:path';
import type { Layout } from './layout.js';
import { SCHEDULE_DIR, tempOwner } from './layout.js';

/**
 * Removes temporary files that a killed process left in the shared directories that have
 * no host owner (nodes/, hosts/, seeds/, robots/, and schedule/ of recrawls): only those older than `maxAgeMs` by the
 * mount's own clock (`serverNowMs`, the mtime the server gave this node's latest heartbeat),
 * since a live writer's temp file exists for milliseconds. Per-host directories are cleaned
 * by the host's owner when it takes the host (HostStore.listHost). Returns how many went.
 */
export async function sweepStaleTemps(layout: Layout, serverNowMs: number, maxAgeMs: number): Promise<number> {
  let removed = 0;
  const { fs } = layout;
  // Hand-off inboxes too (docs/protocol.md, "Hand-offs"): a writer killed mid-write leaves one there.
  const inboxes = (await fs.readdir(layout.dir('handoff')).catch(() => [] as string[])).filter((n) => !n.startsWith('.'));
  const dirs = [
    ...(['nodes', 'hosts', 'seeds', 'robots'] as const).map((name) => layout.dir(name)),
    join(layout.root, SCHEDULE_DIR),
    ...inboxes.map((n) => layout.inbox(n)),
  ];
  for (const dir of dirs) {
    let entries: string[];
    try {
      entries = await fs.readdir(dir);
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (tempOwner(entry) === undefined) continue;
      const path = join(dir, entry);
      try {
        if (serverNowMs - (await fs.stat(path)).mtimeMs > maxAgeMs) {
          await fs.unlink(path);
          removed++;
        }
      } catch {
        // gone already
      }
    }
  }
  return removed;
}
