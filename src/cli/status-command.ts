import { openExistingDataDir } from '../store/data-dir.js';
import { readJsonValidated } from '../store/read-record.js';
import { errorsApart, formatByCode, names, readHoldings, type HostHoldings, type Holdings } from '../store/holdings.js';
import { judgedMaxAttempts, readNodeEnds, readRunState, type JudgedMaxAttempts } from '../store/run-state.js';
import { seeNodes, type SeenNode } from './node-records.js';
import { describeCrawlState, type CrawlState } from './crawl-state.js';
import { summarizeSchedules, type RecrawlSummary } from '../recrawl/schedule-summary.js';
import { type ControlRecord, readControl } from '../cluster/control-file.js';
import { controlLines } from './control-command.js';

/** What `status` reports (also its --json shape). */
export interface StatusReport {
  readonly data: string;
  readonly pages: number;
  readonly htmlFiles: number;
  /** Errs records, exclusions included; `excluded`: of those, URLs robots.txt excludes (Holdings). */
  readonly errors: Holdings['errors'];
  /** The --max-attempts errs records are judged final by (judgedMaxAttempts). */
  readonly maxAttempts: JudgedMaxAttempts;
  readonly seeds: number;
  readonly nodes: readonly SeenNode[];
  readonly hosts: readonly HostStatus[];
  readonly lastActivity: string | null;
  /** Complete, stopped with work left, running, ... (see describeCrawlState). */
  readonly crawl: CrawlState;
  /** Revisits (docs/recrawl.md), when a recrawl ever ran on this directory. */
  readonly recrawl?: RecrawlSummary;
  /** The control file (docs/protocol.md, "The control file"), when a stop, pause or drain was ever given. */
  readonly control?: ControlRecord;
}

export interface HostStatus extends HostHoldings {
  readonly lease: string | null;
}

/**
 * Reads the state of a crawl from its data directory; `wait`: tell live nodes from dead ones
 * (seeNodes). Errs records are final or not under `maxAttempts` (judgedMaxAttempts).
 */
export async function collectStatus(dataDir: string, wait: boolean, maxAttempts?: number): Promise<StatusReport> {
  const layout = await openExistingDataDir(dataDir);
  const nodes = await seeNodes(layout, wait);

  const leases = new Map<string, string>();
  for (const name of await names(layout.dir('hosts'))) {
    if (!name.endsWith('.lease')) continue;
    try {
      const lease = await readJsonValidated(layout.mount, `${layout.dir('hosts')}/${name}`, (v) => v as { node: string });
      leases.set(name.slice(0, -6), lease.node);
    } catch {
      // released meanwhile
    }
  }

  const run = await readRunState(layout);
  const ends = await readNodeEnds(layout);
  const judged = judgedMaxAttempts(maxAttempts, run);
  const held = await readHoldings(layout, judged.value);
  const seeds = (await names(layout.dir('seeds'))).filter((n) => n.endsWith('.url')).length;
  const recrawl = await summarizeSchedules(layout, Date.now());
  const control = await readControl(layout.mount, layout.root);
  return {
    data: dataDir,
    pages: held.pages,
    htmlFiles: held.htmlFiles,
    errors: held.errors,
    maxAttempts: judged,
    seeds,
    nodes,
    hosts: held.hosts.map((h) => ({ ...h, lease: leases.get(h.host) ?? null })),
    lastActivity: held.lastActivity,
    crawl: describeCrawlState({ nodes, run, ends, retries: held.retries, pages: held.pages, seeds }),
    ...(recrawl !== undefined ? { recrawl } : {}),
    ...(typeof control === 'object' ? { control } : {}),
  };
}

/** `mountcrawl status`: a report for people, or --json for scripts. */
export async function statusCommand(
  dataDir: string,
  options: { json: boolean; wait: boolean; maxAttempts?: number },
  out: (line: string) => void,
): Promise<number> {
  const r = await collectStatus(dataDir, options.wait, options.maxAttempts);
  if (options.json) {
    out(JSON.stringify(r, null, 1));
    return 0;
  }
  out(`data      ${r.data}`);
  out(`crawl     ${r.crawl.line}`);
  for (const line of r.control === undefined ? [] : controlLines(r.control, r.nodes)) out(`control   ${line}`);
  out(`pages     ${r.pages} done (${r.htmlFiles} HTML files), ${r.seeds} seeds, last write ${r.lastActivity ?? 'never'}`);
  const from = { option: '', 'last run': ", the last run's", default: ', the default' }[r.maxAttempts.from];
  const limit = `--max-attempts ${r.maxAttempts.value}${from}`;
  const e = errorsApart(r.errors);
  out(`errors    ${e.total} (${e.final} final at ${limit})${e.total ? `: ${formatByCode(e.byCode)}` : ''}`);
  if (e.excluded > 0) out(`excluded  ${e.excluded} URLs disallowed by robots.txt (not fetched)`);
  if (r.recrawl !== undefined) {
    const c = r.recrawl;
    out(`recrawl   ${c.scheduled} scheduled: ${c.dueNow} due now, ${c.dueNextDay} in the next 24 h, next at ${c.nextDueAt ?? 'none'}`);
  }
  out(`nodes     ${r.nodes.length === 0 ? 'none' : ''}`);
  for (const n of r.nodes) {
    const alive = n.alive === null ? 'alive?' : n.alive ? 'alive' : 'dead';
    out(
      `  ${n.id.padEnd(28)} ${alive.padEnd(6)} ${String(n.state).padEnd(8)} pages ${n.pages}, ${n.rate}/s, ` +
        `hosts ${n.hostsOwned}, queued ${n.queued}, round ${n.round}, updated ${n.updatedAt}`,
    );
  }
  out(`hosts     ${r.hosts.length}`);
  for (const h of r.hosts) {
    out(
      `  ${h.host.padEnd(28)} pages ${String(h.pages).padStart(7)}  errors ${String(h.errors - h.excluded).padStart(5)}` +
        `${h.retrying ? ` (${h.retrying} retrying)` : ''}${h.excluded ? `  excluded ${h.excluded}` : ''}  lease ${h.lease ?? '-'}`,
    );
  }
  return 0;
}
