import { isDeadLocalProcess } from '../cluster/local-liveness.js';
import type { NodeRecord } from '../cluster/node-record.js';
import { openExistingDataDir } from '../store/data-dir.js';
import { readNodes } from './node-records.js';
import { readControl } from '../cluster/control-file.js';
import { controlLines } from './control-command.js';

/** The window of the pages/s column, ms. */
const RATE_WINDOW_MS = 60_000;
/** A node whose counter has not moved for this many of its heartbeats is shown as silent. */
const SILENT_BEATS = 3;

interface Seen {
  record: NodeRecord;
  /** When its counter last moved, by this process' monotonic clock. */
  movedAt: number;
  /** Its page counts over the last minute, oldest first. */
  readonly pages: { at: number; pages: number }[];
}

/** One row of the table: a node, or the totals. */
export interface WatchRow {
  readonly node: string;
  readonly state: string;
  readonly rate: number;
  readonly pages: number;
  readonly hosts: number;
  readonly queued: number;
  readonly inFlight: number;
  readonly errors: number;
}

/**
 * What `status --watch` knows of the nodes between two looks: each record, when its counter
 * last moved and its pages over the last minute. Liveness is timed by this process' clock, as
 * nodes time each other's (docs/protocol.md, "Nodes and liveness"); clocks are not compared.
 */
export class NodeWatch {
  readonly #seen = new Map<string, Seen>();

  /** Takes the records of one look at `now` (monotonic ms); nodes whose record is gone are dropped. */
  look(records: readonly NodeRecord[], now: number): void {
    const ids = new Set(records.map((r) => r.id));
    for (const id of this.#seen.keys()) if (!ids.has(id)) this.#seen.delete(id);
    for (const record of records) {
      const seen = this.#seen.get(record.id);
      if (seen === undefined) {
        this.#seen.set(record.id, { record, movedAt: now, pages: [{ at: now, pages: record.pages }] });
        continue;
      }
      if (seen.record.counter !== record.counter) seen.movedAt = now;
      seen.record = record;
      seen.pages.push({ at: now, pages: record.pages });
      while (seen.pages.length > 2 && now - seen.pages[1]!.at >= RATE_WINDOW_MS) seen.pages.shift();
    }
  }

  /** The table now: a row per node (by id), then the totals. */
  rows(now: number): WatchRow[] {
    const rows = [...this.#seen.values()]
      .sort((a, b) => a.record.id.localeCompare(b.record.id))
      .map(({ record: r, movedAt, pages }) => {
        const first = pages[0]!;
        const seconds = (now - first.at) / 1000;
        // Before a second of watching, the node's own rate (its last ten seconds).
        const rate = seconds >= 1 ? Math.max(0, r.pages - first.pages) / seconds : r.rate;
        const silentMs = now - movedAt;
        const silent = r.state !== 'done' && (isDeadLocalProcess(r) || silentMs > SILENT_BEATS * (r.heartbeatMs ?? 1_000));
        return {
          node: r.id,
          state: silent ? `silent ${Math.round(silentMs / 1000)}s` : r.state,
          rate: Math.round(rate * 10) / 10,
          pages: r.pages,
          hosts: r.hostsOwned,
          queued: r.queued,
          inFlight: r.inFlight,
          errors: r.errors,
        };
      });
    const sum = (f: (r: WatchRow) => number): number => rows.reduce((a, r) => a + f(r), 0);
    rows.push({
      node: 'total',
      state: `${rows.filter((r) => !r.state.startsWith('silent') && r.state !== 'done').length} live`,
      rate: Math.round(sum((r) => r.rate) * 10) / 10,
      pages: sum((r) => r.pages),
      hosts: sum((r) => r.hosts),
      queued: sum((r) => r.queued),
      inFlight: sum((r) => r.inFlight),
      errors: sum((r) => r.errors),
    });
    return rows;
  }
}

/** The table as lines of text. */
export function formatWatch(rows: readonly WatchRow[]): string[] {
  const width = Math.max(10, ...rows.map((r) => r.node.length));
  const line = (cells: readonly (string | number)[]): string =>
    `${String(cells[0]).padEnd(width)}  ${String(cells[1]).padEnd(10)}${cells
      .slice(2)
      .map((c) => String(c).padStart(10))
      .join('')}`;
  return [
    line(['node', 'state', 'pages/s', 'pages', 'hosts', 'queued', 'in flight', 'errors']),
    ...rows.map((r) => line([r.node, r.state, r.rate, r.pages, r.hosts, r.queued, r.inFlight, r.errors])),
  ];
}

/**
 * `mountcrawl status --watch`: the nodes and totals about once every `everyMs`, until Ctrl-C
 * or SIGTERM (exit 0). Each look lists nodes/ and reads each node's record and the control file, nothing else: cheap
 * on a network mount whatever the size of the crawl. On a terminal the table is redrawn in
 * place; otherwise each look is printed as a plain snapshot under a time line.
 */
export async function watchStatus(dataDir: string, everyMs: number, tty: boolean, write: (text: string) => void): Promise<number> {
  const layout = await openExistingDataDir(dataDir);
  const watch = new NodeWatch();
  let stopped = false;
  let wake: () => void = () => undefined;
  const stop = (): void => {
    stopped = true;
    wake();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    while (!stopped) {
      const now = performance.now();
      const records = await readNodes(layout);
      watch.look(records, now);
      const table = formatWatch(watch.rows(now)).join('\n');
      // One more small read a second: a pause, a stop or a drain in force (docs/operations.md).
      const control = await readControl(layout.mount, layout.root);
      const orders = typeof control === 'object' ? controlLines(control, records) : [];
      const head = [`${dataDir}  ${new Date().toISOString()}`, ...orders].join('\n');
      write(tty ? `\x1b[H\x1b[2J${head}\n${table}\n` : `${head}\n${table}\n\n`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.max(0, everyMs - (performance.now() - now)));
      });
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  return 0;
}
