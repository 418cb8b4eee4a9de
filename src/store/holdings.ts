import type { Layout } from './layout.js';
import { readJsonValidated } from './read-record.js';
import type { MountFs } from './mount-fs.js';
import { nodeMountFs } from './node-mount-fs.js';
import { asErrsRecord, type ErrsRecord } from './records.js';
import { ErrsTally, EXCLUSION_CODES, type HostErrs } from './errs-tally.js';
import { isKey } from '../url/key.js';
import { mapLimit } from '../util/map-limit.js';

/** What one host of a data directory holds. */
export interface HostHoldings {
  readonly host: string;
  readonly pages: number;
  readonly html: number;
  /** Errs records of URLs without a links record, exclusions included. */
  readonly errors: number;
  /** Of those, URLs robots.txt excludes (EXCLUSION_CODES): not fetched, by the site's own rules. */
  readonly excluded: number;
  readonly retrying: number;
  readonly lastWrite: string | null;
}

/** What a whole data directory holds: what `status`, the end summary and the demo count. */
export interface Holdings {
  readonly pages: number;
  readonly htmlFiles: number;
  /**
   * Errs records of URLs without a links record: all of them (`total`, `final`, `byCode`), and
   * of those the exclusions (`excluded`: ROBOTS_DISALLOWED, final, never requested), which a
   * reader shows apart from the errors (errorsApart).
   */
  readonly errors: { readonly total: number; readonly final: number; readonly byCode: Record<string, number>; readonly excluded: number };
  /** Errs records not final: URLs that a later attempt (this run or the next) tries again. */
  readonly retries: { readonly pending: number; readonly nextAt: string | null };
  readonly hosts: readonly HostHoldings[];
  readonly lastActivity: string | null;
  /** One failure, for a line that says why nothing was fetched. */
  readonly sampleError: Pick<ErrsRecord, 'url' | 'code' | 'message'> | null;
}

/** Visible names in a directory, or none when it cannot be listed. */
export async function names(dir: string, fs: MountFs = nodeMountFs): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).filter((n) => !n.startsWith('.'));
  } catch {
    return [];
  }
}

/**
 * Counts the records of a data directory: pages (links records), html files, errs records
 * of URLs without a links record (by code, final or not under `maxAttempts` as the crawler
 * judges it, src/frontier/retry-policy.ts isFinal, and when the next retry is due), per
 * host. Lists every host directory and reads every errs record, except those of the hosts in
 * `known` (what a node that held them to the end knows of them: the end of a crawl); links
 * records are not read.
 */
export async function readHoldings(
  layout: Layout,
  maxAttempts: number,
  known: ReadonlyMap<string, HostErrs> = new Map(),
): Promise<Holdings> {
  const { fs } = layout;
  const hostNames = new Set([...(await names(layout.dir('links'), fs)), ...(await names(layout.dir('errs'), fs))]);
  const byCode: Record<string, number> = {};
  let finalErrors = 0;
  let excluded = 0;
  let pending = 0;
  let nextMs = Infinity;
  let lastMs = 0;
  let sampleError: Holdings['sampleError'] = null;
  const hosts: HostHoldings[] = [];
  // Hosts and each host's three listings at once: over a network mount every listing is a few
  // round trips, and this runs at the end of every crawl (its summary) and in `status`.
  await mapLimit([...hostNames].sort(), 16, async (host) => {
    const tally = known.get(host);
    const [linkNames, htmlNames, errNames] = await Promise.all([
      names(layout.hostDir('links', host), fs),
      names(layout.hostDir('html', host), fs),
      tally === undefined ? names(layout.hostDir('errs', host), fs) : [],
    ]);
    const links = linkNames.filter((n) => n.endsWith('.json') && isKey(n.slice(0, -5)));
    const html = htmlNames.filter((n) => n.endsWith('.html'));
    const errs = tally ?? (await readErrs(layout, host, errNames, new Set(links.map((n) => n.slice(0, -5))), maxAttempts));
    for (const [code, n] of Object.entries(errs.byCode)) byCode[code] = (byCode[code] ?? 0) + n;
    finalErrors += errs.errors - errs.retrying;
    excluded += errs.excluded;
    pending += errs.retrying;
    nextMs = Math.min(nextMs, errs.nextMs);
    sampleError ??= errs.sample;
    let lastWrite: string | null = null;
    try {
      const m = (await fs.stat(layout.hostDir('links', host))).mtimeMs;
      lastMs = Math.max(lastMs, m);
      lastWrite = new Date(m).toISOString();
    } catch {
      // no links directory yet
    }
    hosts.push({
      host,
      pages: links.length,
      html: html.length,
      errors: errs.errors,
      excluded: errs.excluded,
      retrying: errs.retrying,
      lastWrite,
    });
  });
  hosts.sort((a, b) => a.host.localeCompare(b.host));
  return {
    pages: hosts.reduce((a, h) => a + h.pages, 0),
    htmlFiles: hosts.reduce((a, h) => a + h.html, 0),
    errors: { total: Object.values(byCode).reduce((a, b) => a + b, 0), final: finalErrors, byCode, excluded },
    retries: { pending, nextAt: nextMs < Infinity ? new Date(nextMs).toISOString() : null },
    hosts,
    lastActivity: lastMs > 0 ? new Date(lastMs).toISOString() : null,
    sampleError,
  };
}

/** Reads the errs records `names` of a host, leaving out those of keys `done` (with a links record). */
async function readErrs(
  layout: Layout,
  host: string,
  names: readonly string[],
  done: ReadonlySet<string>,
  maxAttempts: number,
): Promise<HostErrs> {
  const tally = new ErrsTally();
  await mapLimit(names, 16, async (name) => {
    const key = name.slice(0, -5);
    if (!name.endsWith('.json') || done.has(key)) return;
    try {
      tally.errs(key, await readJsonValidated(layout.mount, layout.errs(host, key), asErrsRecord));
    } catch {
      // replaced or removed meanwhile
    }
  });
  return tally.count(maxAttempts);
}

/** `CODE n, CODE n` by count (then by code, so that the line does not depend on the order of reading), or `none`. */
export function formatByCode(byCode: Record<string, number>): string {
  const codes = Object.entries(byCode).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return codes.length === 0 ? 'none' : codes.map(([c, n]) => `${c} ${n}`).join(', ');
}

/** The errors of `e` without its exclusions (which are final), and the exclusions: what a user reads as two counts. */
export function errorsApart(e: Holdings['errors']): { total: number; final: number; byCode: Record<string, number>; excluded: number } {
  const byCode = Object.fromEntries(Object.entries(e.byCode).filter(([code]) => !EXCLUSION_CODES.has(code)));
  return { total: e.total - e.excluded, final: e.final - e.excluded, byCode, excluded: e.excluded };
}

/** `, N excluded by robots.txt` when there are any: the words every count of exclusions is read in. */
export function excludedPart(excluded: number): string {
  return excluded === 0 ? '' : `, ${excluded} excluded by robots.txt`;
}
