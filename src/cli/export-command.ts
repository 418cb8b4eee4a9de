import { ExitCode, FatalError } from '../errors.js';
import { openExistingDataDir } from '../store/data-dir.js';
import { DirHandles } from '../store/dir-handles.js';
import { names } from '../store/holdings.js';
import { type SummaryFile, type SummaryPage, uncoveredKeys } from '../store/host-summary.js';
import { readSummaryPages } from '../store/summary-pages.js';
import type { Layout } from '../store/layout.js';
import type { Decode } from '../store/read-record.js';
import { type RecordReader, recordReader } from '../store/record-reader.js';
import { asErrsRecord, asLinksRecord, ERRS_SHAPE, LINKS_SHAPE } from '../store/records.js';
import { isKey } from '../url/key.js';
import { orderedMap } from '../util/ordered-map.js';
import { exportDecoder, exportLine, summaryHasFields } from './export-fields.js';

/** Options of `mountcrawl export`. */
export interface ExportOptions {
  /** Also the errs records of URLs that have no links record. */
  readonly errors: boolean;
  /** Only these host directories (all when empty). */
  readonly hosts: readonly string[];
  /** Only these fields of each record, in this order (export-fields.ts); every field when absent. */
  readonly fields?: readonly string[] | undefined;
}

/**
 * Writes whole lines (one or more, each ending in a newline); resolves when the stream can
 * take more (a slow reader slows the export down, memory stays flat).
 */
export type LineSink = (lines: Buffer) => Promise<void>;

/** A sink on a writable stream that waits for 'drain' when its buffer is full. */
export function streamSink(stream: NodeJS.WritableStream): LineSink {
  return (lines) =>
    new Promise<void>((resolve) => {
      if (stream.write(lines)) resolve();
      else stream.once('drain', () => resolve());
    });
}

/** Lines are written this many bytes at a time, or fewer at the end: one write per line costs more than making the line. */
const WRITE_BYTES = 64 * 1024;

/** Records read at once: each is a round trip on a network mount; their lines wait for their turn (at most this many). */
const READS_IN_FLIGHT = 64;
/** Lines of a host made as one step (one promise, not one a line): READS_IN_FLIGHT / LINES_AT_ONCE steps are in flight. */
const LINES_AT_ONCE = 16;
/** Hosts listed ahead of the one being written, so that a host's first reads do not wait for its listing... */
const HOSTS_AHEAD = 4;
/** ...unless it has this many lines or more. */
const LARGE_HOST = 10_000;

/** One line of the output, in the order written: made from a host summary, or from a record read when its turn comes near. */
type Line = () => Promise<Buffer | undefined>;

async function keysIn(dir: string): Promise<string[]> {
  return (await names(dir)).flatMap((n) => (n.endsWith('.json') && isKey(n.slice(0, -5)) ? [n.slice(0, -5)] : [])).sort();
}

/**
 * The lines of one host in key order: its links records, then (with `errors`) the errs records
 * of keys without one. When every field asked for is in a host summary, the pages its usable
 * summary covers (docs/protocol.md, "Host summaries": the staleness rule) come from it and
 * only the newer records are read. A record that vanishes or is being replaced meanwhile is
 * skipped.
 */
async function hostLines(layout: Layout, read: RecordReader, host: string, options: ExportOptions): Promise<Line[]> {
  const fields = options.fields;
  const fromSummary = fields !== undefined && summaryHasFields(fields);
  const [links, errs, summarized] = await Promise.all([
    keysIn(layout.hostDir('links', host)),
    options.errors ? keysIn(layout.hostDir('errs', host)) : [],
    fromSummary ? readSummaryPages(layout, host) : undefined,
  ]);
  const covered = coveredPages(summarized, links);
  const lines: Line[] = links.map((key) => {
    const page = covered.get(key);
    if (page !== undefined) {
      const line = Buffer.from(`${exportLine(key, { url: page.url, depth: page.depth }, fields)}\n`);
      return () => Promise.resolve(line);
    }
    return () => readLine(read, layout.links(host, key), exportDecoder(key, LINKS_SHAPE, asLinksRecord, fields));
  });
  const done = new Set(links);
  for (const key of errs) {
    if (!done.has(key)) lines.push(() => readLine(read, layout.errs(host, key), exportDecoder(key, ERRS_SHAPE, asErrsRecord, fields)));
  }
  return lines;
}

/** The pages of a host summary by key, when it is usable by the staleness rule for the listing `keys`; none otherwise. */
function coveredPages(summary: SummaryFile['pages'] | undefined, keys: readonly string[]): Map<string, SummaryPage> {
  const pages = new Map<string, SummaryPage>();
  if (summary === undefined) return pages;
  for (const [key, url, depth] of summary) pages.set(key, { url, depth });
  return uncoveredKeys(pages.keys(), keys) === undefined ? new Map() : pages;
}

async function readLine(read: RecordReader, path: string, decode: Decode<Buffer>): Promise<Buffer | undefined> {
  const record = await read(path, decode);
  return record.kind === 'value' ? record.value : undefined;
}

/**
 * Every line of `hosts` in order, LINES_AT_ONCE at a time. While a host of fewer than
 * LARGE_HOST lines is written, the next few are listed (over a network mount a listing is
 * round trips, which then overlap); a larger one is written before the next is listed, so
 * that memory holds few large listings.
 */
async function* allLines(
  layout: Layout,
  read: RecordReader,
  hosts: readonly string[],
  options: ExportOptions,
): AsyncGenerator<() => Promise<(Buffer | undefined)[]>> {
  const listed: Promise<Line[]>[] = [];
  let next = 0;
  const listNext = (): void => {
    const host = hostLines(layout, read, hosts[next++]!, options);
    host.catch(() => undefined); // thrown when its turn comes, not as an unhandled rejection while an earlier host is written
    listed.push(host);
  };
  while (next < hosts.length || listed.length > 0) {
    if (listed.length === 0) listNext();
    const lines = await listed.shift()!;
    while (next < hosts.length && listed.length < HOSTS_AHEAD && lines.length < LARGE_HOST) listNext();
    for (let i = 0; i < lines.length; i += LINES_AT_ONCE) {
      const some = lines.slice(i, i + LINES_AT_ONCE);
      yield () => Promise.all(some.map((line) => line()));
    }
  }
}

/**
 * `mountcrawl export --jsonl`: every links record of the data directory (and, with
 * `errors`, every errs record of a URL without a links record) as one JSON object per line,
 * host by host, in key order, with `fields` only those fields. Made for `| jq` on a crawl of
 * any size: no shell glob, so no "argument list too long"; records are read many at once (each
 * a round trip on a network mount), and no more are read ahead than READS_IN_FLIGHT while the
 * output waits. Returns the exit code.
 */
export async function exportCommand(dataDir: string, options: ExportOptions, write: LineSink): Promise<number> {
  const layout: Layout = await openExistingDataDir(dataDir);
  const wanted = new Set(options.hosts);
  const hosts = new Set([...(await names(layout.dir('links'))), ...(options.errors ? await names(layout.dir('errs')) : [])]);
  for (const host of wanted) if (!hosts.has(host)) throw noSuchHost(host, dataDir, [...hosts]);
  const chosen = [...hosts].sort().filter((h) => wanted.size === 0 || wanted.has(h));
  const dirs = layout.mount.native ? await DirHandles.forDataDir(layout.root) : undefined;
  try {
    return await exportLines(layout, await recordReader(layout, dirs), chosen, options, write);
  } finally {
    dirs?.close();
  }
}

/** Writes the lines of `chosen` to `write`, WRITE_BYTES at a time, holding no more than READS_IN_FLIGHT lines ahead of it. */
async function exportLines(
  layout: Layout,
  read: RecordReader,
  chosen: readonly string[],
  options: ExportOptions,
  write: LineSink,
): Promise<number> {
  const batch: Buffer[] = [];
  let bytes = 0;
  for await (const some of orderedMap(allLines(layout, read, chosen, options), READS_IN_FLIGHT / LINES_AT_ONCE, (l) => l())) {
    for (const line of some) {
      if (line === undefined) continue;
      batch.push(line);
      bytes += line.length;
    }
    if (bytes < WRITE_BYTES) continue;
    await write(Buffer.concat(batch, bytes));
    batch.length = 0;
    bytes = 0;
  }
  if (batch.length > 0) await write(Buffer.concat(batch, bytes));
  return 0;
}

/** `--host NAME` that names no host directory: one line, with the directories it may have meant. */
export function noSuchHost(host: string, dataDir: string, known: readonly string[]): FatalError {
  const close = closeHostNames(host, known);
  const hint =
    close.length > 0
      ? `; did you mean ${close.join(', ')}?`
      : known.length === 0
        ? '; it holds no host yet'
        : ' (`mountcrawl status` lists the hosts)';
  return new FatalError('NO_SUCH_HOST', `no host directory ${JSON.stringify(host)} in ${dataDir}${hint}`, ExitCode.USAGE);
}

/**
 * Host directories a mistyped name may have meant, best first, at most five: those that
 * begin with it (a host name typed without its `_PORT`, docs/url-keys.md), contain it or are
 * contained in it, then those within two edits of it.
 */
export function closeHostNames(typed: string, known: readonly string[]): string[] {
  const name = typed.toLowerCase();
  const score = (dir: string): number => {
    const d = dir.toLowerCase();
    if (d.startsWith(`${name}_`)) return 0;
    if (d.includes(name) || name.includes(d)) return 1;
    return editDistance(name, d) <= 2 ? 2 : Number.POSITIVE_INFINITY;
  };
  return known
    .map((dir) => [dir, score(dir)] as const)
    .filter(([, s]) => s !== Number.POSITIVE_INFINITY)
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, 5)
    .map(([dir]) => dir);
}

/** Levenshtein distance (small strings: host names). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}
