import { mkdir, writeFile } from 'node:fs/promises';
import { addRecord, emptySummary, writeHostSummary } from '../src/store/host-summary.js';
import type { Layout } from '../src/store/layout.js';
import { serializeRecord, type LinksRecord } from '../src/store/records.js';
import { urlKey } from '../src/url/key.js';
import { mapLimit } from '../src/util/map-limit.js';
import { benchLinksRecord } from './links-record.js';
import { rng } from './pages.js';

/** A host of a synthetic crawl: where its pages are, and the directory name of its records. */
export interface SyntheticHost {
  readonly origin: string;
  readonly hostDir: string;
}

export interface SyntheticCrawlOptions {
  readonly layout: Layout;
  readonly hosts: readonly SyntheticHost[];
  /** Pages with a links record, in all. */
  readonly records: number;
  /** Links per record (to pages of the crawl: 80% of its own host, 20% of others). */
  readonly links: number;
  /** Share of the records that go to the first host (the largest); the rest are spread evenly. 0: all even. */
  readonly largest?: number;
  /** Links per record, on top of `links`, to pages of its host that have no record (distinct for every record): new work. */
  readonly newLinks?: number;
  /** Also writes each host's summary, as the node holding its lease would have (docs/protocol.md, "Host summaries"). */
  readonly summaries?: boolean;
  readonly log?: (line: string) => void;
}

/** Page `j` of a host: pages below the host's record count have a record, the others are new. */
export function syntheticPageUrl(host: SyntheticHost, j: number): string {
  return `${host.origin}/articles/${j % 97}/story-${j}.html`;
}

/** Records of each host, in host order: the first one `largest` of them, the others even. */
export function syntheticHostSizes(records: number, hostCount: number, largest = 0): number[] {
  const first = hostCount === 1 ? records : Math.floor(records * largest);
  const rest = records - first;
  const others = hostCount - 1;
  return Array.from({ length: hostCount }, (_, h) => {
    if (h === 0 && largest > 0) return first;
    const n = largest > 0 ? others : hostCount;
    const i = largest > 0 ? h - 1 : h;
    const total = largest > 0 ? rest : records;
    return Math.floor(total / n) + (i < total % n ? 1 : 0);
  });
}

/**
 * Writes the links records of a crawl as nodes would have left them (the real field set and
 * serialization, bench/links-record.ts), host by host, and with `summaries` each host's summary;
 * the record benches (node-memory, scale) build their data directories with it. Returns the
 * records of each host.
 */
export async function writeSyntheticCrawl(o: SyntheticCrawlOptions): Promise<number[]> {
  const { layout, hosts } = o;
  const sizes = syntheticHostSizes(o.records, hosts.length, o.largest ?? 0);
  const newLinks = o.newLinks ?? 0;
  await mkdir(layout.dir('links'), { recursive: true });
  const started = performance.now();
  let written = 0;
  for (const [h, host] of hosts.entries()) {
    await mkdir(layout.hostDir('links', host.hostDir), { recursive: true });
    const size = sizes[h]!;
    const summary = o.summaries === true ? emptySummary() : undefined;
    await mapLimit(range(size), 64, async (j) => {
      const rec = record(h, j);
      const key = urlKey(rec.url);
      await writeFile(layout.links(host.hostDir, key), serializeRecord(rec));
      if (summary !== undefined) addRecord(summary, key, rec);
      if (++written % 100_000 === 0) o.log?.(`${written} records written`);
    });
    if (summary !== undefined)
      await writeHostSummary(layout, host.hostDir, summary, { nodeId: 'bench-1234', fsync: false, nowMs: Date.now() });
  }
  o.log?.(`${o.records} records of ${hosts.length} hosts written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return sizes;

  /** The links record of page j of host h: links to recorded pages (80% its own host), then its new links. */
  function record(h: number, j: number): LinksRecord {
    const r = rng(h * 7_000_003 + j);
    const links = new Set<string>();
    for (let k = 0; k < o.links; k++) {
      const other = r() < 0.2 ? Math.floor(r() * hosts.length) : h;
      if (sizes[other] === 0) continue;
      links.add(syntheticPageUrl(hosts[other]!, Math.floor(r() * sizes[other]!)));
    }
    for (let k = 0; k < newLinks; k++) links.add(syntheticPageUrl(hosts[h]!, sizes[h]! + j * newLinks + k));
    return benchLinksRecord(syntheticPageUrl(hosts[h]!, j), hosts[h]!.hostDir, j, [...links], r);
  }
}

function* range(n: number): Generator<number> {
  for (let i = 0; i < n; i++) yield i;
}

/** Hosts `site0.example` ... without a server: for crawls only read, never crawled. */
export function namedHosts(count: number): SyntheticHost[] {
  return Array.from({ length: count }, (_, h) => ({ origin: `http://site${h}.example`, hostDir: `site${h}.example` }));
}
