import { writeFileAtomic } from '../store/atomic-write.js';
import { dirname } from 'node:path';
import type { Layout } from '../store/layout.js';
import { readRecord } from '../store/read-record.js';
import { asLinksRecord, type LinksRecord } from '../store/records.js';
import { mapLimit } from '../util/map-limit.js';

/** When one page of a host is due again, as the schedule keeps it. */
export interface ScheduleEntry {
  readonly url: string;
  readonly depth: number;
  /** Wall-clock ms of the next visit (written by some node's clock: skew only moves a visit). */
  readonly dueMs: number;
  /** Wall-clock ms of the last fetch, when known (a sitemap's lastmod is compared with it). */
  readonly fetchedMs?: number;
}

/** The due times of a host's pages, by key. */
export type HostSchedule = Map<string, ScheduleEntry>;

const FORMAT = 1;
const READ_PARALLELISM = 32;

interface ScheduleFile {
  readonly v: number;
  readonly host: string;
  readonly writtenAt: string;
  /** key -> [dueMs, depth, url, fetchedMs?]: compact, one line a page (fetchedMs absent in older files). */
  readonly entries: Record<string, [number, number, string, number?]>;
}

function asScheduleFile(value: unknown): ScheduleFile {
  const f = value as Partial<ScheduleFile> | null;
  if (f === null || typeof f !== 'object' || f.v !== FORMAT || typeof f.entries !== 'object' || f.entries === null) {
    throw new TypeError('not a valid schedule file');
  }
  return f as ScheduleFile;
}

/** The due time a links record implies: its nextFetchAt, else its fetch time plus `afterMs`. */
export function dueOfRecord(record: LinksRecord, afterMs: number): number {
  const next = record.nextFetchAt === undefined ? NaN : Date.parse(record.nextFetchAt);
  if (Number.isFinite(next)) return next;
  const fetched = Date.parse(record.fetchedAt);
  return (Number.isFinite(fetched) ? fetched : 0) + afterMs;
}

/**
 * Reads `schedule/<host>.json` (docs/recrawl.md) and makes it agree with the host's listing:
 * keys without a links record are dropped, keys missing from the file (written after it, or
 * no file at all) are read from their links records. Returns the schedule and how many
 * records had to be read (0 when the file was current).
 */
export async function loadSchedule(
  layout: Layout,
  hostDir: string,
  linksKeys: ReadonlySet<string>,
  afterMs: number,
): Promise<{ schedule: HostSchedule; recordsRead: number }> {
  const schedule: HostSchedule = new Map();
  // Absent or torn: rebuilt from the records below.
  const read = await readRecord(layout.mount, layout.schedule(hostDir), asScheduleFile);
  const file = read.kind === 'value' ? read.value : undefined;
  if (file !== undefined) {
    for (const [key, e] of Object.entries(file.entries)) {
      if (!linksKeys.has(key) || !Array.isArray(e) || typeof e[0] !== 'number' || typeof e[2] !== 'string') continue;
      schedule.set(key, { dueMs: e[0], depth: e[1], url: e[2], ...(typeof e[3] === 'number' ? { fetchedMs: e[3] } : {}) });
    }
  }
  const missing = [...linksKeys].filter((k) => !schedule.has(k));
  await mapLimit(missing, READ_PARALLELISM, async (key) => {
    const read = await readRecord(layout.mount, layout.links(hostDir, key), asLinksRecord);
    if (read.kind !== 'value') return;
    const r = read.value;
    const fetchedMs = Date.parse(r.fetchedAt);
    schedule.set(key, { url: r.url, depth: r.depth, dueMs: dueOfRecord(r, afterMs), ...(Number.isFinite(fetchedMs) ? { fetchedMs } : {}) });
  });
  return { schedule, recordsRead: missing.length };
}

/** Writes a host's schedule whole (temp + rename, docs/protocol.md invariant 1). */
export async function writeSchedule(
  layout: Layout,
  hostDir: string,
  schedule: HostSchedule,
  options: { nodeId: string; fsync: boolean; nowMs: number },
): Promise<void> {
  const entries: Record<string, [number, number, string, number?]> = {};
  for (const [key, e] of schedule)
    entries[key] = e.fetchedMs === undefined ? [e.dueMs, e.depth, e.url] : [e.dueMs, e.depth, e.url, e.fetchedMs];
  const file: ScheduleFile = { v: FORMAT, host: hostDir, writtenAt: new Date(options.nowMs).toISOString(), entries };
  const path = layout.schedule(hostDir);
  // Not recursive: a vanished mount fails here rather than growing a local tree.
  await layout.fs.mkdir(dirname(path)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  await writeFileAtomic(layout.mount, path, JSON.stringify(file), { nodeId: options.nodeId, fsync: options.fsync });
}
