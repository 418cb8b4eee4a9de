import type { Clock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import { decodeBytes } from '../extract/charset.js';
import { attemptsAfterFailure, nextRetryDelay } from '../frontier/retry-policy.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';
import type { HostStore } from '../store/host-store.js';
import type { Layout } from '../store/layout.js';
import type { LinksRecord, Referrer } from '../store/records.js';
import { hostDirOfNormalized } from '../url/host-dir.js';
import { normalizeUrl, type NormalizeOptions } from '../url/normalize.js';
import { buildErrsRecord, buildLinksRecord } from './build-records.js';
import type { Commit, PageOutcome } from '../fetch/page-outcome.js';
import type { Admission } from '../frontier/admission/admission.js';
import type { Frontier } from '../frontier/frontier.js';
import { callHook, type HookCallEnv } from '../hooks/hook-call.js';
import { hookPage, type Hooks } from '../hooks/hooks.js';
import type { HostState } from '../frontier/host-state.js';
import type { Reseeder } from '../reseed/reseeder.js';
import type { Recrawler } from '../recrawl/recrawler.js';

type PageCommit = Extract<Commit, { type: 'page' }>;
type ErrorCommit = Extract<Commit, { type: 'error' }>;

export interface CommitterDeps {
  readonly config: CrawlConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly stats: CrawlStats;
  readonly layout: Layout;
  readonly store: HostStore;
  readonly reseeder: Reseeder;
  readonly frontier: Frontier;
  readonly admission: Admission;
  readonly normalize: NormalizeOptions;
  /** The --hook modules (their onPage, in order). */
  readonly hooks: Hooks;
  readonly hookEnv: HookCallEnv;
  /** Where links of other nodes' hosts go (docs/protocol.md, "Hand-offs"); none: their owners read the record. */
  readonly handoffs?: { found(url: string, hostDir: string, depth: number, referrer?: Referrer): void } | undefined;
  /** Revisits (--recrawl-after): history, change detection, next due time. */
  readonly recrawler?: Recrawler | undefined;
  /** Host summaries (docs/protocol.md, "Host summaries"): told of every links record written. */
  readonly summaries?: { pageWritten(hostDir: string, key: string, record: LinksRecord): void } | undefined;
  /** Called after every page stored (the mount works). */
  readonly onStored: () => void;
  /** --warc: what was fetched is written to the WARC files before it is committed. */
  readonly warc?: { flush(): Promise<void> } | undefined;
}

/**
 * Writes what fetching a URL came to (docs/protocol.md, the commit): for a page, its body then its
 * links record (the commit), targets of a redirect chain before the URLs that led to them;
 * for a failure, its errs record, with the retry schedule. Then the page's links are offered
 * to the admission chain, and a --hook onPage gets its say before anything is written.
 */
export class Committer {
  readonly #d: CommitterDeps;

  constructor(deps: CommitterDeps) {
    this.#d = deps;
  }

  /** Writes an outcome. Throws what the file system throws (the URL is then not done). */
  async commit(host: HostState, outcome: PageOutcome): Promise<void> {
    if (outcome.requests > 0) await this.#d.warc?.flush();
    this.#d.stats.cut.tooLong += outcome.tooLong;
    for (const c of outcome.commits) {
      if (c.type === 'page') await this.#page(host, c);
      else await this.#error(host, c);
    }
    for (const t of outcome.claimed) if (!host.isDone(t.key)) host.release(t.key);
  }

  async #page(host: HostState, found: PageCommit): Promise<void> {
    const { stats, store, admission } = this.#d;
    const c = found.body !== null ? await this.#onPage(found, found.body) : found;
    const key = c.target.key;
    const htmlPath = c.body === null ? null : this.#d.layout.relativeHtml(host.dir, key);
    const filePath = c.file === undefined ? undefined : this.#d.layout.relativeFile(host.dir, key, c.file.ext);
    let record = buildLinksRecord(c, {
      nodeId: this.#d.config.nodeId,
      nowMs: this.#d.clock.now(),
      htmlPath,
      ...(filePath !== undefined ? { filePath } : {}),
    });
    let body = c.body;
    const recrawler = this.#d.recrawler;
    if (recrawler !== undefined) {
      const visit = await recrawler.pageRecord(host.dir, key, record, c.body, c.notModified === true);
      record = visit.record;
      if (!visit.writeBody) body = null;
    }
    // A kept body (--keep) is written before its links record, as html is: the record never points at nothing.
    if (c.file !== undefined) await store.writeFile(host.dir, key, c.file.ext, c.file.body);
    await store.writePage(host.dir, key, body, record);
    host.pageRecorded(key);
    if (host.errsOf(key) !== undefined) await store.removeErrs(host.dir, key);
    host.markDone(key);
    recrawler?.committed(host, record, key);
    this.#d.summaries?.pageWritten(host.dir, key, record);
    this.#d.onStored();
    stats.countPage(record.status, c.body !== null);
    if (c.body !== null) {
      stats.bytes += c.body.length;
      if (c.response.truncated) stats.cut.truncated++;
    }
    if (c.file !== undefined) stats.bytes += c.file.body.length;
    // Links to hosts this node owns go to its frontier; the others are on disk in the record
    // just written, and are handed off to their owners (docs/protocol.md, "Hand-offs").
    let complete = true;
    const referrer = { url: c.target.url, depth: c.target.depth };
    for (const link of c.links) {
      const hostDir = hostDirOfNormalized(link);
      if (hostDir === undefined) continue;
      if (!admission.wantsHost(hostDir)) {
        this.#d.handoffs?.found(link, hostDir, c.target.depth + 1, referrer);
        continue;
      }
      const r = admission.offerRanked(link, hostDir, c.target.depth + 1, referrer);
      if ((typeof r === 'string' ? r : await r) === 'full') complete = false;
    }
    if (complete) this.#d.reseeder.markRead(host.dir, key);
    else this.#d.reseeder.unsettle(host.dir);
  }

  async #error(host: HostState, c: ErrorCommit): Promise<void> {
    const { config, clock, store, stats } = this.#d;
    const { target, failure } = c;
    const previous = host.errsOf(target.key);
    const attempts = attemptsAfterFailure(previous);
    const recrawler = this.#d.recrawler;
    const revisit = recrawler === undefined ? null : recrawler.revisitRetry(host.dir, target.key, failure, attempts);
    const retryIn =
      revisit !== null ? revisit : failure.kind === 'transient' ? nextRetryDelay(attempts, config, failure.retryAfterMs) : undefined;
    const record = buildErrsRecord(target, failure, previous, { nodeId: config.nodeId, nowMs: clock.now(), retryInMs: retryIn });
    await store.writeErrs(host.dir, target.key, record);
    host.errsRecorded(target.key, record);
    stats.countError(failure.code, record.final);
    if (failure.retryAfterMs !== undefined) {
      host.pauseUntil(clock.monotonic() + Math.min(failure.retryAfterMs, config.retryMaxMs));
    }
    if (revisit !== null) {
      recrawler!.failed(host, { url: target.url, key: target.key, depth: target.depth }, retryIn);
      if (!record.final) host.failed(target.key, record);
    } else if (record.final) {
      host.markDone(target.key);
    } else {
      host.failed(target.key, record);
      // A retry keeps its place and the page that linked to it (its errs record names that page).
      const { url, key, depth, priority, referrer } = target;
      const item = { url, key, depth, ...(priority === undefined ? {} : { priority }), ...(referrer === undefined ? {} : { referrer }) };
      this.#d.frontier.addRetry(host, item, clock.monotonic() + retryIn!);
    }
  }

  /**
   * Lets each --hook onPage in turn change the links of a page and add data; one that throws
   * or times out changes nothing (the page goes on as the modules before it left it).
   */
  async #onPage(found: PageCommit, body: Buffer): Promise<PageCommit> {
    let c = found;
    let html: string | undefined;
    for (const m of this.#d.hooks) {
      if (m.onPage === undefined) continue;
      html ??= decodeBytes(body, c.charset ?? 'UTF-8');
      const page = hookPage({
        url: c.target.url,
        status: c.response.status,
        contentType: c.response.contentType,
        depth: c.target.depth,
        html,
        links: c.links,
        ...(c.data === undefined ? {} : { data: c.data }),
      });
      const r = await callHook(this.#d.hookEnv, `onPage (${m.file})`, async () => {
        const result = await m.onPage!(page);
        // What the page keeps is settled here, so that a result JSON cannot hold counts as the hook's failure.
        return result === undefined || result === null ? c : this.#applied(c, result);
      });
      if (r.ok) c = r.value;
    }
    return c;
  }

  #applied(c: PageCommit, result: { readonly links?: readonly string[]; readonly data?: unknown }): PageCommit {
    let links = c.links;
    if (Array.isArray(result.links)) {
      const seen = new Set<string>();
      const kept: string[] = [];
      for (const raw of result.links) {
        const r = typeof raw === 'string' ? normalizeUrl(raw, c.target.url, this.#d.normalize) : undefined;
        if (r?.ok && !seen.has(r.url)) {
          seen.add(r.url);
          kept.push(r.url);
        }
      }
      links = kept;
    }
    const data = result.data === undefined ? {} : { data: JSON.parse(JSON.stringify(result.data)) as unknown };
    return { ...c, links, ...data };
  }
}
