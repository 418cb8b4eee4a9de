import { openExistingDataDir } from '../store/data-dir.js';
import { names } from '../store/holdings.js';
import type { Layout } from '../store/layout.js';
import { nodeMount } from '../store/mount.js';
import { jsonRecord, readJsonValidated } from '../store/read-record.js';
import { judgedMaxAttempts, readRunState } from '../store/run-state.js';
import { isFinal } from '../frontier/retry-policy.js';
import { asErrsRecord, asLinksRecord, type ErrsRecord, type LinksRecord } from '../store/records.js';
import { isKey } from '../url/key.js';
import { hashString } from '../util/string-hash.js';
import { KeySet } from '../url/key-set.js';
import { recordReader } from '../store/record-reader.js';
import { DirHandles } from '../store/dir-handles.js';
import { mapLimit } from '../util/map-limit.js';
import { EXCLUSION_CODES } from '../store/errs-tally.js';
import { Timeline, type TimelineData } from './timeline.js';
import { nodeRows, warcFiles, type NodePages, type NodeRow, type WarcFileRow } from './report-nodes.js';

/** One row of the hosts table. */
export interface HostRow {
  readonly host: string;
  pages: number;
  bytes: number;
  /** Errs records that are failures: the URLs robots.txt excludes are counted in robotsDisallowed. */
  errors: number;
  robotsDisallowed: number;
  retrying: number;
  lease: string | null;
}

/** What `mountcrawl report` shows, and what `report --json` writes. */
export interface ReportData {
  readonly data: string;
  readonly generatedAt: string;
  readonly totals: {
    pages: number;
    htmlPages: number;
    bytes: number;
    /** Failures (errs records of URLs without a page), robots.txt exclusions not included: they are robotsDisallowed. */
    errors: number;
    errorsFinal: number;
    retrying: number;
    robotsDisallowed: number;
    hosts: number;
    linksFound: number;
    distinctLinks: number;
    seeds: number;
    unreadable: number;
    warcFiles: number;
    warcBytes: number;
  };
  /** The earliest fetch of a page, to the millisecond; null before the first. */
  readonly firstFetchAt: string | null;
  readonly timeline: TimelineData;
  /** Responses by HTTP status; `none` for failures without an answer (timeouts, DNS ...), drawn as "no answer". */
  readonly status: Record<string, number>;
  readonly contentTypes: Record<string, number>;
  /** Pages by depth: index = hops from a seed. */
  readonly depth: number[];
  readonly errors: { code: string; count: number; final: number; examples: { url: string; message: string }[] }[];
  /** The busiest hosts (by pages), at most MAX_HOST_ROWS; `totals.hosts` counts them all. */
  readonly hosts: HostRow[];
  readonly nodes: NodeRow[];
  /** The WARC files (docs/warc.md), by name; `totals.warcFiles` and `warcBytes` sum them. */
  readonly warc: WarcFileRow[];
}

const MAX_HOST_ROWS = 5_000;
const EXAMPLES = 5;
const CONTENT_TYPES = 12;
/** Files read at once: enough to keep a network mount busy, few enough for the fd limit... */
const PARALLEL_READS = 64;
/** ...over this many hosts at once, so that hosts of a few pages each keep as many reads in flight. */
const HOSTS_AT_ONCE = 4;

/**
 * Reads a data directory, finished or being written, into the numbers of a report. Streams:
 * each record is read, counted and dropped, so memory grows with the number of hosts (one row
 * each), the distinct links (8 bytes each) and the length of the crawl (timeline buckets, a
 * bounded number), not with the pages.
 */
export async function collectReport(dataDir: string, nowMs: number = Date.now()): Promise<ReportData> {
  const layout = await openExistingDataDir(dataDir);
  const timeline = new Timeline();
  const status: Record<string, number> = {};
  const types = new Map<string, number>();
  const depth: number[] = [];
  const errorCodes = new Map<string, { count: number; final: number; examples: { url: string; message: string }[] }>();
  const distinct = new KeySet();
  const pagesByNode = new Map<string, NodePages>();
  let firstMs = Infinity;
  const t = {
    pages: 0,
    htmlPages: 0,
    bytes: 0,
    errors: 0,
    errorsFinal: 0,
    retrying: 0,
    robotsDisallowed: 0,
    hosts: 0,
    linksFound: 0,
    distinctLinks: 0,
    seeds: 0,
    unreadable: 0,
    warcFiles: 0,
    warcBytes: 0,
  };
  const leases = await readLeases(layout);
  const rows: HostRow[] = [];
  // Final as the last run judged it (`status` counts the same way).
  const maxAttempts = judgedMaxAttempts(undefined, await readRunState(layout)).value;

  const page = (r: LinksRecord, row: HostRow): void => {
    t.pages++;
    row.pages++;
    row.bytes += r.bytes ?? 0;
    t.bytes += r.bytes ?? 0;
    if (r.html) t.htmlPages++;
    status[String(r.status)] = (status[String(r.status)] ?? 0) + 1;
    const type = (r.contentType ?? '').split(';')[0]!.trim().toLowerCase() || '(none)';
    types.set(type, (types.get(type) ?? 0) + 1);
    depth[r.depth] = (depth[r.depth] ?? 0) + 1;
    t.linksFound += r.links.length;
    for (const link of r.links) distinct.addFingerprint(hashString(link, 1), hashString(link, 2));
    const at = Date.parse(r.fetchedAt);
    let node = pagesByNode.get(r.node);
    if (node === undefined) pagesByNode.set(r.node, (node = { pages: 0, lastMs: -Infinity }));
    node.pages++;
    if (at > node.lastMs) node.lastMs = at;
    if (at < firstMs) firstMs = at;
    timeline.add(at, 'pages', 1);
    timeline.add(at, 'links', r.links.length);
  };
  const error = (r: ErrsRecord, row: HostRow): void => {
    const final = isFinal(r, maxAttempts);
    // A URL robots.txt excludes is no failure (docs/errors.md): counted apart, never requested.
    if (EXCLUSION_CODES.has(r.code)) {
      t.robotsDisallowed++;
      row.robotsDisallowed++;
    } else {
      t.errors++;
      row.errors++;
      if (final) t.errorsFinal++;
      const s = r.status === undefined ? 'none' : String(r.status);
      status[s] = (status[s] ?? 0) + 1;
      timeline.add(Date.parse(r.lastAt), 'errors', 1);
    }
    if (!final) {
      t.retrying++;
      row.retrying++;
    }
    let c = errorCodes.get(r.code);
    if (c === undefined) errorCodes.set(r.code, (c = { count: 0, final: 0, examples: [] }));
    c.count++;
    if (final) c.final++;
    if (c.examples.length < EXAMPLES) c.examples.push({ url: r.url, message: r.message });
  };

  const hostNames = [...new Set([...(await names(layout.dir('links'))), ...(await names(layout.dir('errs')))])].sort();
  // Records read through their open host directories on a network mount: fewer round trips each.
  const dirs = layout.mount.native ? await DirHandles.forDataDir(layout.root) : undefined;
  const read = await recordReader(layout, dirs);
  await mapLimit(hostNames, HOSTS_AT_ONCE, async (host) => {
    const row: HostRow = { host, pages: 0, bytes: 0, errors: 0, robotsDisallowed: 0, retrying: 0, lease: leases.get(host) ?? null };
    const done = new KeySet();
    const links = (await names(layout.hostDir('links', host))).filter((n) => n.endsWith('.json') && isKey(n.slice(0, -5)));
    await mapLimit(links, PARALLEL_READS / HOSTS_AT_ONCE, async (name) => {
      // Vanished or unreadable: a live directory moves under us.
      const r = await read(layout.links(host, name.slice(0, -5)), jsonRecord(asLinksRecord));
      if (r.kind !== 'value') return void t.unreadable++;
      done.add(name.slice(0, -5));
      page(r.value, row);
    });
    const errs = (await names(layout.hostDir('errs', host))).filter((n) => n.endsWith('.json') && !done.has(n.slice(0, -5)));
    await mapLimit(errs, PARALLEL_READS / HOSTS_AT_ONCE, async (name) => {
      const r = await read(layout.errs(host, name.slice(0, -5)), jsonRecord(asErrsRecord));
      if (r.kind === 'value') error(r.value, row);
    });
    t.hosts++;
    rows.push(row);
    // Keep the busiest hosts only, so that a crawl of a million hosts still makes a page.
    if (rows.length >= 2 * MAX_HOST_ROWS) trimRows(rows);
  }).finally(() => dirs?.close());
  trimRows(rows);
  t.distinctLinks = distinct.size;
  t.seeds = (await names(layout.dir('seeds'))).filter((n) => n.endsWith('.url')).length;
  const warc = await warcFiles(layout);
  t.warcFiles = warc.length;
  t.warcBytes = warc.reduce((n, f) => n + f.bytes, 0);
  return {
    data: dataDir,
    generatedAt: new Date(nowMs).toISOString(),
    totals: t,
    firstFetchAt: Number.isFinite(firstMs) ? new Date(firstMs).toISOString() : null,
    timeline: timeline.data(),
    status: Object.fromEntries(Object.entries(status).sort((a, b) => a[0].localeCompare(b[0]))),
    contentTypes: topTypes(types),
    depth: Array.from(depth, (n) => n ?? 0),
    errors: [...errorCodes.entries()]
      .map(([code, c]) => ({ code, ...c }))
      .sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)),
    hosts: rows,
    nodes: await nodeRows(layout, pagesByNode, warc),
    warc,
  };
}

function trimRows(rows: HostRow[]): void {
  rows.sort((a, b) => b.pages - a.pages || b.errors - a.errors || a.host.localeCompare(b.host));
  rows.length = Math.min(rows.length, MAX_HOST_ROWS);
}

function topTypes(types: Map<string, number>): Record<string, number> {
  const sorted = [...types.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const out = Object.fromEntries(sorted.slice(0, CONTENT_TYPES));
  const rest = sorted.slice(CONTENT_TYPES).reduce((n, [, c]) => n + c, 0);
  if (rest > 0) out['(other)'] = rest;
  return out;
}

async function readLeases(layout: Layout): Promise<Map<string, string>> {
  const leases = new Map<string, string>();
  await mapLimit(
    (await names(layout.dir('hosts'))).filter((n) => n.endsWith('.lease')),
    PARALLEL_READS,
    async (name) => {
      const lease = await readJsonValidated(nodeMount, `${layout.dir('hosts')}/${name}`, (v) => v as { node?: unknown }).catch(
        () => undefined,
      );
      if (typeof lease?.node === 'string') leases.set(name.slice(0, -'.lease'.length), lease.node);
    },
  );
  return leases;
}
