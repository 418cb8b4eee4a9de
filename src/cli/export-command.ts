import { availableParallelism } from 'node:os';
import { ExitCode, FatalError } from '../errors.js';
import { openExistingDataDir } from '../store/data-dir.js';
import { DirHandles } from '../store/dir-handles.js';
import { fileSystemKind } from '../store/fs-kind.js';
import { names } from '../store/holdings.js';
import { type SummaryFile, type SummaryPage, uncoveredKeys } from '../store/host-summary.js';
import { readSummaryPages } from '../store/summary-pages.js';
import type { Layout } from '../store/layout.js';
import { type RecordReader, recordReader } from '../store/record-reader.js';
import { asErrsRecord, asLinksRecord, ERRS_SHAPE, LINKS_SHAPE } from '../store/records.js';
import { isKey } from '../url/key.js';
import { orderedMap } from '../util/ordered-map.js';
import { exportDecoder, exportLine, summaryHasFields } from './export-fields.js';
import { LineThreads, type RecordToRead } from './export-threads.js';

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

/** Records read at once over a network mount, each a round trip; their lines wait for their turn (at most this many). */
const READS_IN_FLIGHT = 64;
/** Lines of a host made as one step over a network mount (one promise, not one a line): READS_IN_FLIGHT / LINES_AT_ONCE steps are in flight. */
const LINES_AT_ONCE = 16;
/**
 * Lines of a host made as one job of a thread on a local disk (LineThreads), and jobs in flight
 * a thread: one answered while the next is made, so that a thread does not wait for the main
 * thread; THREAD_LINES * THREAD_JOBS lines a thread at most are held ahead of the output.
 */
const THREAD_LINES = 128;
const THREAD_JOBS = 2;
/** Hosts listed ahead of the one being written, so that a host's first reads do not wait for its listing... */
const HOSTS_AHEAD = 4;
/** ...unless it has this many lines or more. */
const LARGE_HOST = 10_000;

/** One line of the output, in the order written: made from a host summary, or a record to read when its turn comes near. */
type Line = Buffer | RecordToRead;

/** A step: lines of one host. */
interface Step {
  readonly host: string;
  readonly lines: readonly Line[];
}

/** How lines are made: `make` turns a step into the bytes of its lines, in order (a record absent or torn has none). */
interface LineMaker {
  readonly linesAtOnce: number;
  readonly stepsInFlight: number;
  make(step: Step): Promise<Buffer[]>;
}

/** Records read by `read`, LINES_AT_ONCE at a time, READS_IN_FLIGHT in flight: a network mount. */
function readerMaker(layout: Layout, read: RecordReader, fields: readonly string[] | undefined): LineMaker {
  const line = async (host: string, l: Line): Promise<Buffer | undefined> => {
    if (Buffer.isBuffer(l)) return l;
    const [path, decode] = l.errs
      ? [layout.errs(host, l.key), exportDecoder(l.key, ERRS_SHAPE, asErrsRecord, fields)]
      : [layout.links(host, l.key), exportDecoder(l.key, LINKS_SHAPE, asLinksRecord, fields)];
    const record = await read(path, decode);
    return record.kind === 'value' ? record.value : undefined;
  };
  return {
    linesAtOnce: LINES_AT_ONCE,
    stepsInFlight: READS_IN_FLIGHT / LINES_AT_ONCE,
    make: async ({ host, lines }) => (await Promise.all(lines.map((l) => line(host, l)))).filter((b) => b !== undefined),
  };
}

/** Records read by `threads`, each run of records between lines made already as one job: a local disk. */
function threadMaker(layout: Layout, threads: LineThreads, fields: readonly string[] | undefined): LineMaker {
  return {
    linesAtOnce: THREAD_LINES,
    stepsInFlight: THREAD_JOBS * threads.max,
    make: ({ host, lines }) => {
      const dirs = { links: layout.hostDir('links', host), errs: layout.hostDir('errs', host) };
      const parts: Promise<Buffer>[] = [];
      let run: RecordToRead[] = [];
      for (const l of lines) {
        if (!Buffer.isBuffer(l)) run.push(l);
        else {
          if (run.length > 0) parts.push(threads.lines(dirs, run, fields));
          run = [];
          parts.push(Promise.resolve(l));
        }
      }
      if (run.length > 0) parts.push(threads.lines(dirs, run, fields));
      return Promise.all(parts);
    },
  };
}

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
async function hostLines(layout: Layout, host: string, options: ExportOptions): Promise<Line[]> {
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
    if (page === undefined) return { key, errs: false };
    return Buffer.from(`${exportLine(key, { url: page.url, depth: page.depth }, fields)}\n`);
  });
  const done = new Set(links);
  for (const key of errs) if (!done.has(key)) lines.push({ key, errs: true });
  return lines;
}

/** The pages of a host summary by key, when it is usable by the staleness rule for the listing `keys`; none otherwise. */
function coveredPages(summary: SummaryFile['pages'] | undefined, keys: readonly string[]): Map<string, SummaryPage> {
  const pages = new Map<string, SummaryPage>();
  if (summary === undefined) return pages;
  for (const [key, url, depth] of summary) pages.set(key, { url, depth });
  return uncoveredKeys(pages.keys(), keys) === undefined ? new Map() : pages;
}

/**
 * Every line of `hosts` in order, in steps of `linesAtOnce` lines of one host. While a host of fewer than
 * LARGE_HOST lines is written, the next few are listed (over a network mount a listing is
 * round trips, which then overlap); a larger one is written before the next is listed, so
 * that memory holds few large listings.
 */
async function* allLines(layout: Layout, hosts: readonly string[], options: ExportOptions, linesAtOnce: number): AsyncGenerator<Step> {
  const listed: Promise<{ host: string; lines: Line[] }>[] = [];
  let next = 0;
  const listNext = (): void => {
    const name = hosts[next++]!;
    const host = hostLines(layout, name, options).then((lines) => ({ host: name, lines }));
    host.catch(() => undefined); // thrown when its turn comes, not as an unhandled rejection while an earlier host is written
    listed.push(host);
  };
  while (next < hosts.length || listed.length > 0) {
    if (listed.length === 0) listNext();
    const { host, lines } = await listed.shift()!;
    while (next < hosts.length && listed.length < HOSTS_AHEAD && lines.length < LARGE_HOST) listNext();
    for (let i = 0; i < lines.length; i += linesAtOnce) yield { host, lines: lines.slice(i, i + linesAtOnce) };
  }
}

/**
 * `mountcrawl export --jsonl`: every links record of the data directory (and, with
 * `errors`, every errs record of a URL without a links record) as one JSON object per line,
 * host by host, in key order, with `fields` only those fields. Made for `| jq` on a crawl of
 * any size: no shell glob, so no "argument list too long". On a local disk the records are
 * read and printed by threads, one a core (LineThreads); elsewhere many are read at once, each
 * a round trip on a network mount. No more are read ahead than a few steps while the output
 * waits. Returns the exit code.
 */
export async function exportCommand(dataDir: string, options: ExportOptions, write: LineSink): Promise<number> {
  const layout: Layout = await openExistingDataDir(dataDir);
  const wanted = new Set(options.hosts);
  const hosts = new Set([...(await names(layout.dir('links'))), ...(options.errors ? await names(layout.dir('errs')) : [])]);
  for (const host of wanted) if (!hosts.has(host)) throw noSuchHost(host, dataDir, [...hosts]);
  const chosen = [...hosts].sort().filter((h) => wanted.size === 0 || wanted.has(h));
  // With one core a thread would only add its hand-offs: the main thread reads, as elsewhere.
  if (layout.mount.native && availableParallelism() > 1 && (await fileSystemKind(layout.root)) === 'local') {
    const threads = new LineThreads();
    try {
      return await exportLines(layout, threadMaker(layout, threads, options.fields), chosen, options, write);
    } finally {
      await threads.close();
    }
  }
  const dirs = layout.mount.native ? await DirHandles.forDataDir(layout.root) : undefined;
  try {
    return await exportLines(layout, readerMaker(layout, await recordReader(layout, dirs), options.fields), chosen, options, write);
  } finally {
    dirs?.close();
  }
}

/** Writes the lines of `chosen` to `write`, WRITE_BYTES or more at a time, holding no more than `maker`'s steps in flight ahead of it. */
async function exportLines(
  layout: Layout,
  maker: LineMaker,
  chosen: readonly string[],
  options: ExportOptions,
  write: LineSink,
): Promise<number> {
  const batch: Buffer[] = [];
  let bytes = 0;
  for await (const some of orderedMap(allLines(layout, chosen, options, maker.linesAtOnce), maker.stepsInFlight, (l) => maker.make(l))) {
    for (const lines of some) {
      batch.push(lines);
      bytes += lines.length;
    }
    if (bytes < WRITE_BYTES) continue;
    await write(batch.length === 1 ? batch[0]! : Buffer.concat(batch, bytes));
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
