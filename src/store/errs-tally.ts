import { isFinal } from '../frontier/retry-policy.js';
import type { ErrsRecord } from './records.js';

/**
 * Errs records that are no failure: URLs left alone by the site's own rules (robots.txt, a
 * final ROBOTS_DISALLOWED record, docs/errors.md), never requested. They are counted with the
 * errs records (`byCode`, totals) and shown apart from the errors wherever counts are read.
 */
export const EXCLUSION_CODES: ReadonlySet<string> = new Set(['ROBOTS_DISALLOWED']);

/**
 * Of the record kept so far and the next, the one a line that says why nothing was fetched
 * names: a failure before an exclusion (an exclusion is no failure), else the first.
 */
export function sampleCause<T extends { readonly code: string }>(kept: T | null, next: T | null): T | null {
  if (kept === null) return next;
  return next !== null && EXCLUSION_CODES.has(kept.code) && !EXCLUSION_CODES.has(next.code) ? next : kept;
}

/** What the errs records of one host come to: the counts of readHoldings (src/store/holdings.ts). */
export interface HostErrs {
  /** Errs records of keys without a links record (exclusions included). */
  readonly errors: number;
  /** Of those, exclusions (EXCLUSION_CODES): final, not failures. */
  readonly excluded: number;
  /** Of those, not final under the --max-attempts counted with (isFinal): a later attempt tries the URL again. */
  readonly retrying: number;
  readonly byCode: Readonly<Record<string, number>>;
  /** The earliest `nextAttemptAt` of the records not final, epoch ms (Infinity: none). */
  readonly nextMs: number;
  /** One of the records, a failure if there is one, for a line that says why nothing was fetched. */
  readonly sample: Pick<ErrsRecord, 'url' | 'code' | 'message'> | null;
}

type Entry = Pick<ErrsRecord, 'url' | 'code' | 'message' | 'final' | 'attempts' | 'nextAttemptAt'>;

/**
 * The errs records of one host that count (those of keys without a links record), by key.
 * readHoldings fills one from a host's files; a node keeps one for each host it holds (read
 * from the host's listing when it took it, then kept up to date with every record it writes,
 * as the only writer of the host while it holds the lease, docs/protocol.md), and the end of
 * a run counts those instead of reading every errs record again.
 */
export class ErrsTally {
  readonly #entries = new Map<string, Entry>();

  /** An errs record of `key` was written or read. */
  errs(key: string, record: ErrsRecord): void {
    const { url, code, message, final, attempts, nextAttemptAt } = record;
    this.#entries.set(key, { url, code, message, final, attempts, nextAttemptAt });
  }

  /** A links record of `key` was written: its errs record, if any, no longer counts. */
  page(key: string): void {
    this.#entries.delete(key);
  }

  /** What the host's errs records come to now, final or not under `maxAttempts` (--max-attempts). */
  count(maxAttempts: number): HostErrs {
    const byCode: Record<string, number> = {};
    let retrying = 0;
    let excluded = 0;
    let nextMs = Infinity;
    let sample: HostErrs['sample'] = null;
    for (const e of this.#entries.values()) {
      byCode[e.code] = (byCode[e.code] ?? 0) + 1;
      if (EXCLUSION_CODES.has(e.code)) excluded++;
      sample = sampleCause(sample, { url: e.url, code: e.code, message: e.message });
      if (isFinal(e, maxAttempts)) continue;
      retrying++;
      const at = e.nextAttemptAt === null ? NaN : Date.parse(e.nextAttemptAt);
      if (Number.isFinite(at)) nextMs = Math.min(nextMs, at);
    }
    return { errors: this.#entries.size, excluded, retrying, byCode, nextMs, sample };
  }
}
