import { join } from 'node:path';
import { SCHEDULE_DIR, type Layout } from '../store/layout.js';
import { readJsonValidated } from '../store/read-record.js';
import { mapLimit } from '../util/map-limit.js';

/** What `status` says of revisits (docs/recrawl.md): read from the schedule files only. */
export interface RecrawlSummary {
  /** Pages with a due time in a schedule. */
  readonly scheduled: number;
  /** Of which due now. */
  readonly dueNow: number;
  /** Due within the next 24 hours (not now). */
  readonly dueNextDay: number;
  /** The earliest due time still to come, ISO 8601, or null. */
  readonly nextDueAt: string | null;
}

interface EntriesOnly {
  readonly entries: Record<string, [number, number, string]>;
}

function asEntries(value: unknown): EntriesOnly {
  const v = value as Partial<EntriesOnly> | null;
  if (v === null || typeof v !== 'object' || typeof v.entries !== 'object' || v.entries === null) throw new TypeError('not a schedule');
  return v as EntriesOnly;
}

/**
 * Sums up every host's schedule file; undefined when no recrawl ever wrote one. A schedule
 * is written every few seconds while its host is crawled, so the counts can lag that much.
 */
export async function summarizeSchedules(layout: Layout, nowMs: number): Promise<RecrawlSummary | undefined> {
  let names: string[];
  try {
    names = (await layout.fs.readdir(join(layout.root, SCHEDULE_DIR))).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let scheduled = 0;
  let dueNow = 0;
  let dueNextDay = 0;
  let next = Infinity;
  await mapLimit(names, 8, async (name) => {
    let file: EntriesOnly;
    try {
      file = await readJsonValidated(layout.mount, join(layout.root, SCHEDULE_DIR, name), asEntries);
    } catch {
      return; // vanished or unreadable: the owner rebuilds it
    }
    for (const e of Object.values(file.entries)) {
      const due = Array.isArray(e) ? e[0] : NaN;
      if (typeof due !== 'number') continue;
      scheduled++;
      if (due <= nowMs) dueNow++;
      else {
        if (due <= nowMs + 86_400_000) dueNextDay++;
        next = Math.min(next, due);
      }
    }
  });
  return { scheduled, dueNow, dueNextDay, nextDueAt: next === Infinity ? null : new Date(next).toISOString() };
}
