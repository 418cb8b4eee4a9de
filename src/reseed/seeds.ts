import { readdir } from 'node:fs/promises';
import { writeFileAtomic } from '../store/atomic-write.js';
import type { Layout } from '../store/layout.js';
import { urlKey } from '../url/key.js';

/**
 * Adds seed URLs (already normalized) to seeds/<key>.url, where every node's reseed finds
 * them. Writing one that exists rewrites the same content: harmless and atomic.
 */
export async function writeSeeds(layout: Layout, urls: readonly string[], nodeId: string): Promise<void> {
  for (const url of urls) {
    await writeFileAtomic(layout.seed(urlKey(url)), `${url}\n`, { nodeId, fsync: false });
  }
}

/** True when seeds/ holds at least one seed. */
export async function hasSeeds(layout: Layout): Promise<boolean> {
  try {
    return (await readdir(layout.dir('seeds'))).some((n) => n.endsWith('.url'));
  } catch {
    return false;
  }
}
