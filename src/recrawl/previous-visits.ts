import type { Clock } from '../config/clock.js';
import type { FetchFailure } from '../errors.js';
import type { Layout } from '../store/layout.js';
import type { LinksRecord } from '../store/records.js';
import type { RecrawlPolicy } from './recrawl-policy.js';
import { revisitBackoff } from './revisit-backoff.js';
import { contentSignature } from './signature.js';
import { withVisit } from './visit-record.js';

/** The links record to write for a fetched page, whether its body is written, and whether it changed. */
export interface PageRecord {
  readonly record: LinksRecord;
  readonly writeBody: boolean;
  readonly changed: boolean;
}

/**
 * The previous links records of the revisits in flight (docs/recrawl.md), from the request
 * (Recrawler.prepare) to the commit: what a visit is compared with (changed or not, its
 * history and interval), and what a failed revisit backs off from.
 */
export class PreviousVisits {
  readonly #d: { readonly policy: RecrawlPolicy; readonly clock: Clock; readonly layout: Layout };
  /** By `host/key`. */
  readonly #previous = new Map<string, LinksRecord>();

  constructor(deps: { readonly policy: RecrawlPolicy; readonly clock: Clock; readonly layout: Layout }) {
    this.#d = deps;
  }

  /** A revisit starts: `prev` is the page's links record before it. */
  remember(hostDir: string, key: string, prev: LinksRecord): void {
    this.#previous.set(`${hostDir}/${key}`, prev);
  }

  /** Forgets the previous record of a revisit that will not be committed. */
  abandon(hostDir: string, key: string): void {
    this.#previous.delete(`${hostDir}/${key}`);
  }

  /**
   * The links record to write for a fetched page, with its visit history, interval and due
   * time, and whether its body must be written (false when the stored one stands: a 304 or
   * the same signature).
   */
  async pageRecord(hostDir: string, key: string, record: LinksRecord, body: Buffer | null, notModified: boolean): Promise<PageRecord> {
    const { policy, clock } = this.#d;
    const prev = this.#previous.get(`${hostDir}/${key}`);
    const nowMs = clock.now();
    if (notModified && prev !== undefined) {
      const r = withVisit(prev, {
        nowMs,
        status: record.status,
        changed: false,
        bytes: 0,
        policy,
        node: record.node,
        durationMs: record.durationMs,
      });
      return { record: r, writeBody: false, changed: false };
    }
    const signature = body === null ? undefined : contentSignature(body);
    let changed = true;
    if (prev !== undefined && signature !== undefined && prev.html !== null) {
      const before = prev.signature ?? (await this.#storedSignature(prev.html));
      changed = before !== signature;
    } else if (prev !== undefined && body === null) {
      // No body (a redirect, a non-HTML page): changed when where it leads or its status did.
      changed = prev.status !== record.status || prev.finalUrl !== record.finalUrl || prev.html !== null;
    }
    const base: LinksRecord = {
      ...record,
      ...(signature !== undefined ? { signature } : {}),
      ...(prev?.history !== undefined ? { history: prev.history } : {}),
      ...(prev?.intervalMs !== undefined ? { intervalMs: prev.intervalMs } : {}),
      ...(prev !== undefined && !changed && prev.changedAt !== undefined ? { changedAt: prev.changedAt } : {}),
    };
    const r = withVisit(base, { nowMs, status: record.status, changed, bytes: body?.length ?? 0, policy, first: prev === undefined });
    return { record: r, writeBody: body !== null && changed, changed };
  }

  /**
   * The wait before the next attempt of a revisit that failed (2, 4, 8 times its interval),
   * or undefined when it is retired (docs/recrawl.md). Not a revisit: null (the usual rules).
   */
  revisitRetry(hostDir: string, key: string, failure: FetchFailure, attempts: number): number | undefined | null {
    const prev = this.#previous.get(`${hostDir}/${key}`);
    if (prev === undefined) return null;
    this.#previous.delete(`${hostDir}/${key}`);
    return revisitBackoff(prev.intervalMs ?? this.#d.policy.afterMs, attempts, failure.status);
  }

  /** The MD5 of a stored body (records written before signatures were kept). */
  async #storedSignature(relativeHtml: string): Promise<string | undefined> {
    try {
      return contentSignature(await this.#d.layout.fs.readFile(`${this.#d.layout.root}/${relativeHtml}`));
    } catch {
      return undefined;
    }
  }
}
