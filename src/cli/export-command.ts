import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ExitCode, FatalError } from '../errors.js';
import { openExistingDataDir } from '../store/data-dir.js';
import { names } from '../store/holdings.js';
import type { Layout } from '../store/layout.js';
import { isKey } from '../url/key.js';

/** Options of `mountcrawl export`. */
export interface ExportOptions {
  /** Also the errs records of URLs that have no links record. */
  readonly errors: boolean;
  /** Only these host directories (all when empty). */
  readonly hosts: readonly string[];
}

/** Writes one line; resolves when the stream can take more (a slow reader slows the export down, memory stays flat). */
export type LineSink = (line: string) => Promise<void>;

/** A sink on a writable stream that waits for 'drain' when its buffer is full. */
export function streamSink(stream: NodeJS.WritableStream): LineSink {
  return (line) =>
    new Promise<void>((resolve) => {
      if (stream.write(`${line}\n`)) resolve();
      else stream.once('drain', () => resolve());
    });
}

async function records(dir: string): Promise<string[]> {
  return (await names(dir)).filter((n) => n.endsWith('.json') && isKey(n.slice(0, -5))).sort();
}

/**
 * `mountcrawl export --jsonl`: every links record of the data directory (and, with
 * `errors`, every errs record of a URL without a links record) as one JSON object per line,
 * host by host, in key order. Made for `| jq` on a crawl of any size: no shell glob, so no
 * "argument list too long". A record that vanishes or is being replaced meanwhile is skipped.
 * Returns the exit code.
 */
export async function exportCommand(dataDir: string, options: ExportOptions, write: LineSink): Promise<number> {
  const layout: Layout = await openExistingDataDir(dataDir);
  const wanted = new Set(options.hosts);
  const hosts = new Set([...(await names(layout.dir('links'))), ...(options.errors ? await names(layout.dir('errs')) : [])]);
  for (const host of wanted) if (!hosts.has(host)) throw noSuchHost(host, dataDir, [...hosts]);
  for (const host of [...hosts].sort()) {
    if (wanted.size > 0 && !wanted.has(host)) continue;
    const links = await records(layout.hostDir('links', host));
    for (const name of links) await emit(join(layout.hostDir('links', host), name), write);
    if (!options.errors) continue;
    const done = new Set(links);
    for (const name of await records(layout.hostDir('errs', host))) {
      if (!done.has(name)) await emit(join(layout.hostDir('errs', host), name), write);
    }
  }
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

async function emit(path: string, write: LineSink): Promise<void> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return; // removed or replaced between the listing and the read
  }
  await write(JSON.stringify(value));
}
