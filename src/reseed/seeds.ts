import { writeFileAtomic } from '../store/atomic-write.js';
import type { Layout } from '../store/layout.js';
import { urlKey } from '../url/key.js';
import { mapLimit } from '../util/map-limit.js';

/** Seed files written at once. */
const SEED_WRITES = 16;

/**
 * Adds seed URLs (already normalized) to seeds/<key>.url, where every node's reseed finds
 * them. A seed whose file is there already is not written again: the name is the URL's key,
 * so the file holds this URL, written whole by whoever wrote it (nodes of a cluster are
 * usually given the same seeds; a restarted crawl always is).
 */
export async function writeSeeds(layout: Layout, urls: readonly string[], nodeId: string): Promise<void> {
  if (urls.length === 0) return;
  const present = new Set(await layout.fs.readdir(layout.dir('seeds')).catch(() => []));
  const missing = urls.filter((url) => !present.has(`${urlKey(url)}.url`));
  // Several at once: each write is a dozen round trips on a network mount (200 seeds one by
  // one took about 20 s over a mount with 2 ms each way).
  await mapLimit(missing, SEED_WRITES, (url) =>
    writeFileAtomic(layout.mount, layout.seed(urlKey(url)), `${url}\n`, { nodeId, fsync: false }),
  );
}

/**
 * True when seeds/ holds at least one seed; false when it is empty or not there. Throws any
 * other error: a mount that fails (EIO) says nothing about the seeds, and a node that took it
 * for "nothing to crawl" stopped for good where it waits out the mount (docs/errors.md).
 */
export async function hasSeeds(layout: Layout): Promise<boolean> {
  try {
    return (await layout.fs.readdir(layout.dir('seeds'))).some((n) => n.endsWith('.url'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw err;
  }
}
