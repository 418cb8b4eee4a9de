import { openDataDir } from '../store/data-dir.js';
import { writeSeeds } from '../reseed/seeds.js';
import { normalizationOf, normalizeOrFail } from './key-command.js';
import { defaultNodeId } from '../config/parse-values.js';
import { hostname } from 'node:os';

/** `mountcrawl seed URL...`: adds seeds that running nodes pick up at their next reseed. */
export async function seedCommand(urls: readonly string[], dataDir: string, out: (line: string) => void): Promise<number> {
  const options = await normalizationOf(dataDir);
  const normalized = urls.map((u) => normalizeOrFail(u, options));
  const { layout } = await openDataDir(dataDir, defaultNodeId(hostname(), process.pid));
  await writeSeeds(
    layout,
    normalized.map((n) => n.url),
    defaultNodeId(hostname(), process.pid),
  );
  for (const n of normalized) out(`${n.key}\t${n.url}`);
  return 0;
}
