import type { Clock } from '../config/clock.js';
import { describeError } from '../errors.js';
import type { Logger } from '../progress/logger.js';
import { currentHostSummary, writeHostSummary } from '../store/host-summary.js';
import type { Layout } from '../store/layout.js';
import type { LinksRecord } from '../store/records.js';
import { mapLimit } from '../util/map-limit.js';

/** A host's summary is written again after this many new pages of it... */
export const SUMMARY_EVERY_PAGES = 1000;
/** ...or at its first new page this long after the last write... */
export const SUMMARY_EVERY_MS = 60_000;
/**
 * ...that makes the new pages at least this share of the pages the summary covers: a write
 * reads and writes the whole summary (a host of 50,000 pages: 57 MB of JSON), so a host
 * crawled slowly is not rewritten every minute for a page or two.
 */
export const SUMMARY_GROWTH = 0.05;

/** At a clean stop, summaries are begun for this long... */
export const SUMMARY_STOP_BUDGET_MS = 10_000;
/** Summaries written at once (each holds its host's pages and links in memory while it is made). */
const WRITE_PARALLELISM = 4;

type Page = Pick<LinksRecord, 'url' | 'depth' | 'links'>;

interface HostPending {
  /** Pages written since the last summary, kept so that the next one need not read them back. */
  readonly pages: Map<string, Page>;
  lastWriteMs: number;
  /** The pages of the host's records at its take, or those of the last summary written. */
  covered: number;
  /** The write under way, if any. */
  writing: Promise<void> | undefined;
}

/**
 * Writes the summaries of the hosts whose lease this node holds (docs/protocol.md, "Host
 * summaries"): every SUMMARY_EVERY_PAGES new pages or SUMMARY_EVERY_MS (once SUMMARY_GROWTH is new), when a host is let go
 * to its next owner, and at a clean stop. A summary is the last one brought up to date with
 * the records (those this node wrote since are in memory, others are read), so a kill at any
 * moment only leaves a summary that covers fewer records: its readers read those records.
 */
export class SummaryWriter {
  readonly #layout: Layout;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #options: { nodeId: string; fsync: boolean };
  readonly #hosts = new Map<string, HostPending>();
  /** Writes under way (at most WRITE_PARALLELISM), and those waiting for their turn. */
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(deps: { layout: Layout; clock: Clock; log: Logger; nodeId: string; fsync: boolean }) {
    this.#layout = deps.layout;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#options = { nodeId: deps.nodeId, fsync: deps.fsync };
  }

  /** The host was taken with `records` links records in its listing (what its summary covers, or will). */
  taken(hostDir: string, records: number): void {
    this.#host(hostDir).covered = records;
  }

  /** A page's links record was written: its summary is written again when enough is new. */
  pageWritten(hostDir: string, key: string, record: Page): void {
    const h = this.#host(hostDir);
    h.pages.set(key, { url: record.url, depth: record.depth, links: record.links });
    const n = h.pages.size;
    const due =
      n >= SUMMARY_EVERY_PAGES || (this.#clock.monotonic() - h.lastWriteMs >= SUMMARY_EVERY_MS && n >= SUMMARY_GROWTH * h.covered);
    if (due && h.writing === undefined) void this.#write(hostDir, h);
  }

  #host(hostDir: string): HostPending {
    let h = this.#hosts.get(hostDir);
    if (h === undefined) {
      h = { pages: new Map(), lastWriteMs: this.#clock.monotonic(), covered: 0, writing: undefined };
      this.#hosts.set(hostDir, h);
    }
    return h;
  }

  /**
   * The host leaves this node: with `write` (its lease is still held), its summary is written
   * first; without (the lease was lost), what was pending is dropped: only the holder writes.
   */
  async forget(hostDir: string, write: boolean): Promise<void> {
    const h = this.#hosts.get(hostDir);
    if (h === undefined) return;
    await h.writing;
    if (write && h.pages.size > 0) await this.#write(hostDir, h);
    this.#hosts.delete(hostDir);
  }

  /**
   * A clean stop: the hosts with new pages have their summaries written (before the leases
   * go), a few at a time, those begun within `budgetMs`: a summary made from scratch reads
   * every record of its host, and one not written is only made by a later holder.
   */
  async flushAll(budgetMs: number = SUMMARY_STOP_BUDGET_MS): Promise<void> {
    const until = this.#clock.monotonic() + budgetMs;
    await mapLimit([...this.#hosts.keys()], WRITE_PARALLELISM, (dir) => this.forget(dir, this.#clock.monotonic() < until));
  }

  /** Brings the host's summary up to date and writes it; a failure only leaves the last one (its readers read more records). */
  #write(hostDir: string, h: HostPending): Promise<void> {
    const written = new Map(h.pages);
    h.lastWriteMs = this.#clock.monotonic();
    const run = async (): Promise<void> => {
      if (this.#active < WRITE_PARALLELISM) this.#active++;
      else await new Promise<void>((resolve) => this.#waiting.push(resolve)); // a finished write hands its turn on
      try {
        const { summary, changed } = await currentHostSummary(this.#layout, hostDir, written);
        if (changed) await writeHostSummary(this.#layout, hostDir, summary, { ...this.#options, nowMs: this.#clock.now() });
        h.covered = summary.pages.size;
        for (const [key, page] of written) if (h.pages.get(key) === page) h.pages.delete(key);
      } catch (err) {
        this.#log.debug('host summary not written', { host: hostDir, error: describeError(err) });
      } finally {
        h.writing = undefined;
        const next = this.#waiting.shift();
        if (next !== undefined) next();
        else this.#active--;
      }
    };
    h.writing = run();
    return h.writing;
  }
}
