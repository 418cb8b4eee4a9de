import { ExitCode } from '../errors.js';
import { errorsApart, excludedPart, formatByCode, readHoldings, type Holdings } from '../store/holdings.js';
import type { Layout } from '../store/layout.js';
import type { HostErrs } from '../store/errs-tally.js';
import { plural } from '../util/plural.js';
import { removeNodeEnds, writeNodeEnd, writeRunState, type RunState } from '../store/run-state.js';

/** How a run ended, before the data directory is looked at. */
export interface RunEnd {
  readonly reason: 'complete' | 'max-pages' | 'stopped' | 'mount-failed';
  readonly exitCode: number;
  readonly message?: string;
}

/**
 * What the data directory holds after a run, as one line of the end summary: a rerun of a
 * finished crawl fetches nothing, and the line says what is there all the same. Its hosts are
 * those `status` lists (with pages or errs records only: an unreachable seed's host is one);
 * URLs robots.txt excludes are counted apart from the errors.
 */
export function holdingsLine(h: Holdings): string {
  const retries = h.retries.pending > 0 ? `, ${h.retries.pending} due again` : '';
  const e = errorsApart(h.errors);
  const errors = e.total === 0 ? '0 errors' : `${plural(e.total, 'error')} (${e.final} final${retries}: ${formatByCode(e.byCode)})`;
  return `data directory: ${plural(h.pages, 'page')} of ${plural(h.hosts.length, 'host')}, ${errors}${excludedPart(e.excluded)}`;
}

/**
 * The exit of a crawl that "completed" without storing a single page while errs records were
 * written (docs/errors.md, NOTHING_FETCHED): every seed failed, or robots.txt excludes every
 * one, which is said in those words (an exclusion is no failure). Otherwise `end` as it is.
 */
export function judgeOutcome(end: RunEnd, h: Holdings): RunEnd {
  if (end.reason !== 'complete' || end.exitCode !== ExitCode.OK || h.pages > 0 || h.errors.total === 0) return end;
  const e = errorsApart(h.errors);
  const sample = h.sampleError === null ? '' : `${h.sampleError.code} ${h.sampleError.url}: ${h.sampleError.message}`;
  const message =
    e.total === 0
      ? `robots.txt excludes every seed, so no page was stored${h.sampleError === null ? '' : ` (${h.sampleError.url})`}; ${plural(e.excluded, 'URL')} excluded`
      : `every seed failed and no page was stored${sample === '' ? '' : ` (${sample})`}; errors: ${formatByCode(e.byCode)}${excludedPart(e.excluded)}`;
  return { reason: end.reason, exitCode: ExitCode.NOTHING_FETCHED, message: `NOTHING_FETCHED: ${message} (see mountcrawl status)` };
}

/**
 * Records how the run ended for `status` (complete, or stopped with what was left), in the
 * shared run state and in this node's own end of run; best effort. `ended` (CrawlNode.endedAs):
 * the node was idle when it stopped (nothing left but retries), and the nodes it saw leave while
 * it worked. A complete end removes their ends (the crawl finished their work) and writes none
 * of its own; a stopped one names them, so that `status` counts a host they both held once (src/cli/crawl-state.ts).
 */
export async function recordRunEnd(
  layout: Layout,
  run: { readonly nodeId: string; readonly maxAttempts: number },
  end: RunEnd,
  left: { queued: number; leftOnDisk: number; byHost?: Readonly<Record<string, number>> },
  ended: { readonly state: string; readonly departed: readonly string[] } = { state: 'stopping', departed: [] },
): Promise<void> {
  const at = new Date().toISOString();
  const { nodeId: node, maxAttempts } = run;
  const departed = ended.departed.filter((id) => id !== node);
  const idle = ended.state === 'idle' && left.queued === 0 && left.leftOnDisk === 0;
  const state: RunState =
    end.reason === 'complete'
      ? { state: 'complete', node, at, maxAttempts }
      : {
          state: 'stopped',
          node,
          at,
          reason: end.reason,
          queued: left.queued,
          leftOnDisk: left.leftOnDisk,
          maxAttempts,
          ...(idle ? { idle } : {}),
          ...(left.byHost !== undefined ? { byHost: left.byHost } : {}),
          departed,
        };
  // A complete end needs no end of its own (the shared run state says complete): a finished
  // crawl's directory holds no more files than before.
  if (end.reason === 'complete') await removeNodeEnds(layout, [...departed, node]);
  else await writeNodeEnd(layout, state).catch(() => undefined);
  await writeRunState(layout, state).catch(() => undefined);
}

/**
 * Reads the data directory's holdings, or undefined when it cannot be read (a failed mount).
 * Errs records are final or not under the run's `maxAttempts`. `known`: the errs records of
 * hosts the node held to the end (CrawlNode.heldErrs), not read again.
 */
export async function holdingsOf(
  layout: Layout,
  maxAttempts: number,
  known?: ReadonlyMap<string, HostErrs>,
): Promise<Holdings | undefined> {
  return readHoldings(layout, maxAttempts, known).catch(() => undefined);
}
