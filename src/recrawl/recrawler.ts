import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { FetchFailure } from '../errors.js';
import type { Validators } from '../fetch/fetcher.js';
import type { Frontier } from '../frontier/frontier.js';
import type { HostState } from '../frontier/host-state.js';
import type { Logger } from '../progress/logger.js';
import type { Layout } from '../store/layout.js';
import { readRecord } from '../store/read-record.js';
import { asLinksRecord, type ErrsRecord, type LinksRecord } from '../store/records.js';
import type { RecrawlPolicy } from './recrawl-policy.js';
import { loadSchedule, writeSchedule, type HostSchedule } from './schedule-file.js';
import { PreviousVisits, type PageRecord } from './previous-visits.js';

/** A schedule is written at most this often per host while pages are committed. */
const FLUSH_EVERY_MS = 5_000;

export interface RecrawlerDeps {
  readonly config: CrawlConfig;
  readonly policy: RecrawlPolicy;
  readonly clock: Clock;
  readonly log: Logger;
  readonly layout: Layout;
  readonly frontier: Frontier;
}

interface HostBook {
  readonly schedule: HostSchedule;
  dirty: boolean;
  lastWrite: number;
  /** Keys due now that did not fit under --frontier-cap: queued by `refill` as room frees. */
  readonly pending: string[];
  /** Keys a sitemap made due now (docs/sitemaps.md): their records' nextFetchAt does not hold them back. */
  readonly forced: Set<string>;
}

/** What a revisit needs before its request: the page's previous links record. */
export type Preparation = { readonly due: true; readonly validators?: Validators } | { readonly due: false };

/**
 * Revisits (docs/recrawl.md): knows when each page of the hosts this node owns is due
 * (one schedule file per host, rebuilt from the links records when missing or stale),
 * queues what is due, sends the stored validators, tells a changed page from an unchanged
 * one, keeps each page's history and interval in its links record, and backs failing
 * revisits off.
 */
export class Recrawler {
  readonly #d: RecrawlerDeps;
  readonly #books = new Map<string, HostBook>();
  /** Previous links records of revisits in flight. */
  readonly #previous: PreviousVisits;
  /** Keys in every book's `pending`: refill costs nothing while there are none. */
  #pendingTotal = 0;

  constructor(deps: RecrawlerDeps) {
    this.#d = deps;
    this.#previous = new PreviousVisits(deps);
  }

  /**
   * Takes a host's pages into account when the host is taken (instead of marking them
   * done): due ones are queued, later ones wait as timed retries with --watch and count as
   * done without. Errs records of revisits decide too: final ones are retired, the others
   * are due at their next attempt. Returns false when the host was let go meanwhile.
   */
  async load(host: HostState, linksKeys: ReadonlySet<string>, errs: ReadonlyMap<string, ErrsRecord>): Promise<boolean> {
    const { layout, policy, clock, frontier, config, log } = this.#d;
    const { schedule, recordsRead } = await loadSchedule(layout, host.dir, linksKeys, policy.afterMs);
    if (host.phase !== 'loading') return false;
    const book: HostBook = { schedule, dirty: recordsRead > 0, lastWrite: -Infinity, pending: [], forced: new Set() };
    this.#books.set(host.dir, book);
    if (recordsRead > 0) log.info('rebuilt recrawl schedule', { host: host.dir, recordsRead, pages: schedule.size });
    // Written before anything is queued: from here to the host's `ready` nothing may wait.
    if (book.dirty) await this.flush(host.dir);
    if (host.phase !== 'loading') return false;
    const wallNow = clock.now();
    const monoNow = clock.monotonic();
    const timed: { item: { url: string; key: string; depth: number }; at: number }[] = [];
    // Due pages obey --frontier-cap like any URL; the rest wait in `pending` (refill).
    let room = config.frontierCap - frontier.queued;
    for (const [key, e] of schedule) {
      const err = errs.get(key);
      if (err?.final === true) {
        host.addDone(key);
        continue;
      }
      const errDue = err?.nextAttemptAt ? Date.parse(err.nextAttemptAt) : NaN;
      const due = Number.isFinite(errDue) ? Math.max(e.dueMs, errDue) : e.dueMs;
      const item = { url: e.url, key, depth: e.depth };
      // A failed revisit waits as a retry even when due (the host's errs records are read as retries too).
      if (due <= wallNow && err === undefined) {
        if (room-- > 0) frontier.requeue(host, item);
        else {
          book.pending.push(key);
          this.#pendingTotal++;
        }
      } else if (due <= wallNow || config.watch) timed.push({ item, at: monoNow + Math.max(0, due - wallNow) });
      else host.addDone(key);
    }
    // The retry timer is armed once, for the last: arming per item would scan the retries each time.
    const last = timed.pop();
    for (const t of timed) host.addRetry(t.item, t.at);
    if (last !== undefined) frontier.addRetry(host, last.item, last.at);
    return true;
  }

  /**
   * Before a request: the validators of a page fetched before, or `due: false` when its
   * links record says it is not due yet (the schedule was older than the record: the visit
   * is put back at its time).
   */
  async prepare(host: HostState, key: string): Promise<Preparation> {
    const book = this.#books.get(host.dir);
    if (book === undefined || !book.schedule.has(key)) return { due: true };
    const read = await readRecord(this.#d.layout.mount, this.#d.layout.links(host.dir, key), asLinksRecord);
    if (read.kind !== 'value') {
      book.schedule.delete(key);
      return { due: true };
    }
    const prev = read.value;
    const e = book.schedule.get(key)!;
    // A page a sitemap made due, or a sitemap (its own interval: committed), goes by the schedule alone.
    const bySchedule = book.forced.delete(key) || prev.sitemap !== undefined;
    const dueMs = bySchedule || prev.nextFetchAt === undefined ? e.dueMs : Math.max(e.dueMs, Date.parse(prev.nextFetchAt) || 0);
    if (dueMs > this.#d.clock.now()) {
      this.#reschedule(host, key, { url: e.url, depth: e.depth, dueMs });
      return { due: false };
    }
    this.#previous.remember(host.dir, key, prev);
    const validators = {
      ...(prev.etag !== undefined ? { etag: prev.etag } : {}),
      ...(prev.lastModified !== undefined ? { lastModified: prev.lastModified } : {}),
      // The capture whose content this is: the visit that last found it changed, else the fetch.
      previous: { url: prev.url, fetchedAt: prev.changedAt ?? prev.fetchedAt },
    };
    return { due: true, ...(prev.html !== null && (prev.etag !== undefined || prev.lastModified !== undefined) ? { validators } : {}) };
  }

  /** Forgets the previous record of a revisit that will not be committed. */
  abandon(hostDir: string, key: string): void {
    this.#previous.abandon(hostDir, key);
  }

  /** The links record to write for a fetched page (PreviousVisits.pageRecord). */
  pageRecord(hostDir: string, key: string, record: LinksRecord, body: Buffer | null, notModified: boolean): Promise<PageRecord> {
    return this.#previous.pageRecord(hostDir, key, record, body, notModified);
  }

  /** The wait before the next attempt of a revisit that failed (PreviousVisits.revisitRetry). */
  revisitRetry(hostDir: string, key: string, failure: FetchFailure, attempts: number): number | undefined | null {
    return this.#previous.revisitRetry(hostDir, key, failure, attempts);
  }

  /** After a page's record is written: its next visit is scheduled (and armed with --watch). */
  committed(host: HostState, record: LinksRecord, key: string): void {
    this.#previous.abandon(host.dir, key);
    const { clock, policy } = this.#d;
    // A sitemap is visited again after the shortest interval (docs/sitemaps.md): it is the cheap index of what changed.
    const dueMs =
      record.sitemap !== undefined ? clock.now() + policy.minMs : Date.parse(record.nextFetchAt ?? '') || clock.now() + policy.afterMs;
    const fetchedMs = Date.parse(record.fetchedAt);
    this.#reschedule(host, key, { url: record.url, depth: record.depth, dueMs, ...(Number.isFinite(fetchedMs) ? { fetchedMs } : {}) });
  }

  /**
   * A sitemap says a page of this host changed after its last fetch (`lastmodMs` newer than
   * it), or a sitemap of the host is due at the start of a run (`lastmodMs` undefined): the
   * page is due now (docs/sitemaps.md). Pages queued, in flight or failing are left as they
   * are. True when the page was made due.
   */
  makeDue(host: HostState, key: string, lastmodMs?: number): boolean {
    const { clock, policy } = this.#d;
    const book = this.#books.get(host.dir);
    const e = book?.schedule.get(key);
    if (book === undefined || e === undefined || host.errsOf(key) !== undefined) return false;
    if (lastmodMs !== undefined && !(lastmodMs > (e.fetchedMs ?? e.dueMs - policy.afterMs))) return false;
    const now = clock.now();
    if (host.isClaimed(key)) {
      // Queued or in flight (due already), or waiting as a timed visit (--watch): take that one back.
      if (e.dueMs <= now || !host.takeRetry(key)) return false;
      host.release(key);
    } else if (!host.isDone(key)) {
      return false; // due already, waiting for room (pending)
    }
    book.schedule.set(key, { ...e, dueMs: now });
    book.dirty = true;
    book.forced.add(key);
    book.pending.push(key);
    this.#pendingTotal++;
    this.refill();
    return true;
  }

  /** Queues pending due pages while --frontier-cap leaves room; returns how many. */
  refill(): number {
    const { config, frontier } = this.#d;
    let room = config.frontierCap - frontier.queued;
    if (this.#pendingTotal === 0 || room <= 0) return 0;
    let n = 0;
    for (const [dir, book] of this.#books) {
      const host = frontier.hosts.get(dir);
      if (host === undefined || host.phase !== 'ready') continue;
      while (room > 0 && book.pending.length > 0) {
        const key = book.pending.pop()!;
        this.#pendingTotal--;
        const e = book.schedule.get(key);
        // Taken meanwhile (a link to it was admitted), or fetched meanwhile.
        if (e === undefined || host.isClaimed(key) || (host.isDone(key) && !book.forced.has(key))) continue;
        frontier.enqueue(host, { url: e.url, key, depth: e.depth });
        room--;
        n++;
      }
    }
    return n;
  }

  /** After a revisit's errs record is written: with --watch it waits as a timed retry, without it is done for this run. */
  failed(host: HostState, item: { url: string; key: string; depth: number }, retryInMs: number | undefined): void {
    const book = this.#books.get(host.dir);
    if (retryInMs === undefined) {
      book?.schedule.delete(item.key);
      if (book !== undefined) book.dirty = true;
      host.markDone(item.key);
      return;
    }
    this.#reschedule(host, item.key, { url: item.url, depth: item.depth, dueMs: this.#d.clock.now() + retryInMs });
  }

  #reschedule(host: HostState, key: string, e: { url: string; depth: number; dueMs: number; fetchedMs?: number }): void {
    const { clock, config, frontier } = this.#d;
    const book = this.#books.get(host.dir);
    if (book === undefined) return;
    const fetchedMs = e.fetchedMs ?? book.schedule.get(key)?.fetchedMs;
    book.schedule.set(key, { ...e, ...(fetchedMs !== undefined ? { fetchedMs } : {}) });
    book.dirty = true;
    host.markDone(key);
    if (config.watch && host.phase === 'ready') {
      frontier.addRetry(host, { url: e.url, key, depth: e.depth }, clock.monotonic() + Math.max(0, e.dueMs - clock.now()));
    }
    if (clock.monotonic() - book.lastWrite >= FLUSH_EVERY_MS) void this.flush(host.dir).catch(() => undefined);
  }

  /** Writes a host's schedule when it changed. */
  async flush(hostDir: string): Promise<void> {
    const book = this.#books.get(hostDir);
    if (book === undefined || !book.dirty) return;
    const { layout, config, clock } = this.#d;
    book.dirty = false;
    book.lastWrite = clock.monotonic();
    try {
      await writeSchedule(layout, hostDir, book.schedule, { nodeId: config.nodeId, fsync: config.fsync, nowMs: clock.now() });
    } catch (err) {
      book.dirty = true;
      throw err;
    }
  }

  /** Writes every changed schedule (at the end of a run, or when a host is let go). */
  async flushAll(): Promise<void> {
    for (const dir of this.#books.keys()) await this.flush(dir);
  }

  /** Forgets a host let go, after writing its schedule when `write` (the lease is still ours). */
  async forget(hostDir: string, write: boolean): Promise<void> {
    if (write) await this.flush(hostDir).catch(() => undefined);
    this.#pendingTotal -= this.#books.get(hostDir)?.pending.length ?? 0;
    this.#books.delete(hostDir);
  }
}
