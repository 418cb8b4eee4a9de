import { dirname } from 'node:path';
import { isKey } from '../url/key.js';
import { mapLimit } from '../util/map-limit.js';
import { writeFileAtomic } from './atomic-write.js';
import type { Layout } from './layout.js';
import { readRecord } from './read-record.js';
import { asLinksRecord, type LinksRecord } from './records.js';

/** The version of the summary files this build writes and reads (docs/protocol.md, "Host summaries"). */
export const SUMMARY_FORMAT = 1;
/** Records read in parallel when a summary is brought up to date (each is a round trip on a network mount). */
const READ_PARALLELISM = 32;

/** A page a summary covers: its URL and depth (the depth of its links is one more). */
export interface SummaryPage {
  readonly url: string;
  readonly depth: number;
}

/**
 * What a reseed takes from a host's links records, in one file (docs/protocol.md, "Host
 * summaries"): the pages covered, and each distinct link of theirs with the key of the
 * shallowest page naming it (its referrer: the link's depth is that page's plus one).
 */
export interface HostSummary {
  readonly pages: Map<string, SummaryPage>;
  readonly links: Map<string, string>;
}

/** The file, as a reseed reads it: pages as [key, url, depth], links as [url, index of their page in `pages`]. */
export interface SummaryFile {
  readonly v: number;
  readonly host: string;
  readonly writtenAt: string;
  readonly pages: readonly (readonly [string, string, number])[];
  readonly links: readonly (readonly [string, number])[];
}

export function emptySummary(): HostSummary {
  return { pages: new Map(), links: new Map() };
}

/** Adds the page of one links record to a summary (its links keep their shallowest referrer). */
export function addRecord(s: HostSummary, key: string, record: Pick<LinksRecord, 'url' | 'depth' | 'links'>): void {
  s.pages.set(key, { url: record.url, depth: record.depth });
  for (const link of record.links) {
    if (typeof link !== 'string') continue;
    const was = s.links.get(link);
    if (was === undefined || s.pages.get(was)!.depth > record.depth) s.links.set(link, key);
  }
}

/** Checks the `pages` of a parsed summary file, entry by entry; throws TypeError (torn) on anything else. */
export function checkPages(pages: readonly unknown[]): asserts pages is SummaryFile['pages'] {
  for (const p of pages) {
    if (!Array.isArray(p) || !isKey(p[0]) || typeof p[1] !== 'string' || typeof p[2] !== 'number')
      throw new TypeError('not a valid host summary');
  }
}

/** Checks a parsed summary file, entry by entry; throws TypeError (torn) on anything else. */
function asSummaryFile(hostDir: string): (value: unknown) => SummaryFile {
  return (value) => {
    const f = value as Partial<SummaryFile> | null;
    if (
      f === null ||
      typeof f !== 'object' ||
      f.v !== SUMMARY_FORMAT ||
      f.host !== hostDir ||
      !Array.isArray(f.pages) ||
      !Array.isArray(f.links)
    ) {
      throw new TypeError('not a valid host summary');
    }
    checkPages(f.pages);
    const count = f.pages.length;
    for (const l of f.links) {
      if (!Array.isArray(l) || typeof l[0] !== 'string' || typeof l[1] !== 'number' || !(l[1] >= 0 && l[1] < count)) {
        throw new TypeError('not a valid host summary');
      }
    }
    return f as SummaryFile;
  };
}

/** Reads `summaries/<host>.json` as it is; undefined when absent, torn or not of this format (rebuilt from the records). */
export async function readSummaryFile(layout: Layout, hostDir: string): Promise<SummaryFile | undefined> {
  const read = await readRecord(layout.mount, layout.summary(hostDir), asSummaryFile(hostDir));
  return read.kind === 'value' ? read.value : undefined;
}

/** Reads a host's summary, to add to it; undefined as readSummaryFile. */
export async function readHostSummary(layout: Layout, hostDir: string): Promise<HostSummary | undefined> {
  const file = await readSummaryFile(layout, hostDir);
  if (file === undefined) return undefined;
  const s = emptySummary();
  for (const [key, url, depth] of file.pages) s.pages.set(key, { url, depth });
  for (const [url, i] of file.links) s.links.set(url, file.pages[i]![0]);
  return s;
}

/** Writes a host's summary whole (temp + rename, docs/protocol.md invariant 1). */
export async function writeHostSummary(
  layout: Layout,
  hostDir: string,
  s: HostSummary,
  options: { nodeId: string; fsync: boolean; nowMs: number },
): Promise<void> {
  const index = new Map<string, number>();
  const pages: (readonly [string, string, number])[] = [];
  for (const [key, p] of s.pages) {
    index.set(key, pages.length);
    pages.push([key, p.url, p.depth]);
  }
  const links: (readonly [string, number])[] = [];
  for (const [url, key] of s.links) links.push([url, index.get(key)!]);
  const file: SummaryFile = { v: SUMMARY_FORMAT, host: hostDir, writtenAt: new Date(options.nowMs).toISOString(), pages, links };
  const path = layout.summary(hostDir);
  // Not recursive: a vanished mount fails here rather than growing a local tree.
  await layout.fs.mkdir(dirname(path)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  await writeFileAtomic(layout.mount, path, JSON.stringify(file), { nodeId: options.nodeId, fsync: options.fsync });
}

/** The keys of links/<host>, by one listing (temporary files and other names left out); none when it is missing. */
export async function listLinksKeys(layout: Layout, hostDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await layout.fs.readdir(layout.hostDir('links', hostDir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const keys: string[] = [];
  for (const name of names) if (name.endsWith('.json') && isKey(name.slice(0, -5))) keys.push(name.slice(0, -5));
  return keys;
}

/**
 * The staleness rule (docs/protocol.md, "Host summaries"): a summary is used only if every
 * page it covers is in the listing `keys` (else it is ignored, as if absent); returns the
 * listed keys it does not cover, whose records must be read.
 */
export function uncoveredKeys(pageKeys: Iterable<string>, keys: readonly string[]): string[] | undefined {
  const listed = new Set(keys);
  const covered = new Set<string>();
  for (const key of pageKeys) {
    if (!listed.has(key)) return undefined;
    covered.add(key);
  }
  return keys.filter((k) => !covered.has(k));
}

/**
 * A host's summary made current: its file (when usable) plus the records of the listing it
 * does not cover, except those `known` gives (pages this node wrote and still has in memory).
 * Returns it with the number of records read and whether it differs from the file.
 */
export async function currentHostSummary(
  layout: Layout,
  hostDir: string,
  known: ReadonlyMap<string, Pick<LinksRecord, 'url' | 'depth' | 'links'>> = new Map(),
): Promise<{ summary: HostSummary; recordsRead: number; changed: boolean }> {
  const [file, keys] = await Promise.all([readHostSummary(layout, hostDir), listLinksKeys(layout, hostDir)]);
  const missing = file === undefined ? undefined : uncoveredKeys(file.pages.keys(), keys);
  const summary = missing === undefined ? emptySummary() : file!;
  let recordsRead = 0;
  const toRead: string[] = [];
  for (const key of missing ?? keys) {
    const rec = known.get(key);
    if (rec === undefined) toRead.push(key);
    else addRecord(summary, key, rec);
  }
  await mapLimit(toRead, READ_PARALLELISM, async (key) => {
    // Absent or torn: not covered, read again by the next reader.
    const read = await readRecord(layout.mount, layout.links(hostDir, key), asLinksRecord);
    if (read.kind !== 'value') return;
    recordsRead++;
    addRecord(summary, key, read.value);
  });
  return { summary, recordsRead, changed: missing === undefined ? summary.pages.size > 0 : missing.length > 0 };
}
