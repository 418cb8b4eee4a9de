import { join } from 'node:path';
import type { Layout } from './layout.js';
import { SCHEDULE_DIR, SUMMARY_DIR } from './layout.js';
import { tempOwner } from './temp-names.js';

/**
 * Removes temporary files that a killed process left in the shared directories that have
 * no host owner (nodes/, hosts/, seeds/, robots/, schedule/ of recrawls, summaries/): only those older than `maxAgeMs` by the
 * mount's own clock (`serverNowMs`, the mtime the server gave this node's latest heartbeat),
 * since a live writer's temp file exists for milliseconds, and whatever their age those whose
 * writer is `gone` (Membership.isGone: a node killed mid-write, seen dead). Per-host
 * directories are cleaned by the host's owner when it takes the host (HostStore.listHost).
 * Returns how many went.
 */
export async function sweepStaleTemps(
  layout: Layout,
  serverNowMs: number,
  maxAgeMs: number,
  gone: (nodeId: string) => boolean = () => false,
): Promise<number> {
  let removed = 0;
  const { fs } = layout;
  // Hand-off inboxes too (docs/protocol.md, "Hand-offs"): a writer killed mid-write leaves one there.
  const inboxes = (await fs.readdir(layout.dir('handoff')).catch(() => [] as string[])).filter((n) => !n.startsWith('.'));
  const dirs = [
    ...(['nodes', 'hosts', 'seeds', 'robots'] as const).map((name) => layout.dir(name)),
    join(layout.root, SCHEDULE_DIR),
    join(layout.root, SUMMARY_DIR),
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
      const owner = tempOwner(entry);
      if (owner === undefined) continue;
      const path = join(dir, entry);
      try {
        if (gone(owner) || serverNowMs - (await fs.stat(path)).mtimeMs > maxAgeMs) {
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
