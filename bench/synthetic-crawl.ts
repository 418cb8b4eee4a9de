/**
 * A finished crawl, written straight into a data directory as nodes would have left it: the
 * links records of `records` pages over `hosts` (host-major, the real field set and
 * serialization: bench/links-record.ts; links to pages of the same host (80%) and of others,
 * all of them pages that have a record), and with `summaries` each host's summary as its
 * lease holder writes it (src/store/host-summary.ts). The benches of a node's memory and
 * resume (node-memory.ts) and of reading a crawl (read-speed.ts) build their crawls with it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { currentHostSummary, writeHostSummary } from '../src/store/host-summary.js';
import { Layout } from '../src/store/layout.js';
import { serializeRecord, type LinksRecord } from '../src/store/records.js';
import { urlKey } from '../src/url/key.js';
import { mapLimit } from '../src/util/map-limit.js';
import { benchLinksRecord } from './links-record.js';
import { rng } from './pages.js';

/** A host of a synthetic crawl: its origin (`http://name:port`) and its directory name. */
export interface SyntheticHost {
  readonly origin: string;
  readonly hostDir: string;
}

export interface SyntheticCrawl {
  /** Links records in all. */
  readonly records: number;
  readonly hosts: readonly SyntheticHost[];
  /** Links drawn per record (duplicates dropped). */
  readonly links: number;
  /** Also each host's summary, made from its records as a lease holder makes it. */
  readonly summaries?: boolean;
  readonly log?: (line: string) => void;
}

/** Hosts `site0.example` ... without a server: for crawls only read, never crawled. */
export function namedHosts(count: number): SyntheticHost[] {
  return Array.from({ length: count }, (_, h) => ({ origin: `http://site${h}.example`, hostDir: `site${h}.example` }));
}

/** The URL of page `j` of host `h`. */
function pageUrl(c: SyntheticCrawl, h: number, j: number): string {
  return `${c.hosts[h]!.origin}/articles/${j % 97}/story-${j}.html`;
}

/** The links record of page `j` of host `h`. */
export function syntheticRecord(c: SyntheticCrawl, h: number, j: number): LinksRecord {
  const hostCount = c.hosts.length;
  const perHost = Math.floor(c.records / hostCount);
  const r = rng(h * 7_000_003 + j);
  const links = new Set<string>();
  for (let k = 0; k < c.links; k++) {
    const other = r() < 0.2 ? Math.floor(r() * hostCount) : h;
    links.add(pageUrl(c, other, Math.floor(r() * perHost)));
  }
  return benchLinksRecord(pageUrl(c, h, j), c.hosts[h]!.hostDir, j, [...links], r);
}

/** Writes the crawl into `root` (its links/ and, with `summaries`, summaries/); returns the seconds it took. */
export async function writeSyntheticCrawl(root: string, c: SyntheticCrawl): Promise<number> {
  const started = performance.now();
  const hostCount = c.hosts.length;
  const layout = new Layout(root);
  await mkdir(layout.dir('links'), { recursive: true });
  for (const host of c.hosts) await mkdir(layout.hostDir('links', host.hostDir), { recursive: true });
  let written = 0;
  const indexes = (function* () {
    for (let i = 0; i < c.records; i++) yield i;
  })();
  await mapLimit(indexes, 64, async (i) => {
    const h = i % hostCount;
    const rec = syntheticRecord(c, h, Math.floor(i / hostCount));
    await writeFile(layout.links(c.hosts[h]!.hostDir, urlKey(rec.url)), serializeRecord(rec));
    if (++written % 100_000 === 0) c.log?.(`${written} records written`);
  });
  if (c.summaries === true) {
    await mapLimit(c.hosts, 4, async ({ hostDir }) => {
      const { summary } = await currentHostSummary(layout, hostDir);
      await writeHostSummary(layout, hostDir, summary, { nodeId: 'bench', fsync: false, nowMs: Date.now() });
    });
  }
  return (performance.now() - started) / 1000;
}
