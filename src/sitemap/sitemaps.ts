import type { Clock } from '../config/clock.js';
import type { SitemapContext } from './fetch-sitemap.js';
import type { PageOutcome, Target } from '../fetch/page-outcome.js';
import type { HostState } from '../frontier/host-state.js';
import type { Logger } from '../progress/logger.js';
import type { Recrawler } from '../recrawl/recrawler.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import type { Layout } from '../store/layout.js';
import { readRecord } from '../store/read-record.js';
import { asLinksRecord } from '../store/records.js';
import { hostDirOfNormalized } from '../url/host-dir.js';
import { urlKey } from '../url/key.js';
import { normalizeUrl, type NormalizeOptions } from '../url/normalize.js';
import { fetchSitemap, type LastmodHint } from './fetch-sitemap.js';

/** Sitemaps nest this deep at most: a root (0), an index's child (1), a child's child (2). */
export const SITEMAP_MAX_NESTING = 2;
/** The list of --sitemap files is read again after this long (a node started later may add some). */
const SEEDS_REREAD_MS = 2_000;

export interface SitemapsDeps {
  readonly layout: Layout;
  readonly clock: Clock;
  readonly log: Logger;
  readonly normalize: NormalizeOptions;
  /** Follow the `Sitemap:` lines of robots.txt (--sitemaps). */
  readonly fromRobots: boolean;
  /** Queues a sitemap URL of a host this node owns through the admission chain. */
  readonly offer: (url: string, hostDir: string, depth: number) => unknown;
  readonly recrawler?: Recrawler | undefined;
}

/**
 * Sitemaps (docs/sitemaps.md). Each host's owner finds its sitemaps when it learns the
 * host's robots.txt (`Sitemap:` lines with --sitemaps, and the --sitemap URLs of the host,
 * kept in `sitemaps/` on the mount), queues those not fetched yet through the admission
 * chain, and knows which of its queued URLs are sitemaps (the runner then fetches them with
 * fetch-sitemap.ts, under the host's lease and politeness like any URL). A fetched sitemap
 * is a links record whose links are its entries; an index's children are found again from
 * its record at the next take. With --recrawl-after, every sitemap is due at each take and
 * a `<lastmod>` newer than a page's last fetch makes the page due now.
 */
export class Sitemaps {
  readonly #d: SitemapsDeps;
  /** Sitemap keys of each host, with their nesting level. */
  readonly #known = new Map<string, Map<string, number>>();
  readonly #hints = new WeakMap<PageOutcome, readonly LastmodHint[]>();
  #seeds: { urls: Map<string, string>; readAt: number } | undefined;

  constructor(deps: SitemapsDeps) {
    this.#d = deps;
  }

  /** True when the URL of `key` on `hostDir` is a sitemap to be fetched as one. */
  isSitemap(hostDir: string, key: string): boolean {
    return this.#known.get(hostDir)?.has(key) === true;
  }

  /**
   * When a host is taken (with robots.txt's sitemaps as stored) and before its queue may
   * start (with those of robots.txt as fetched): registers the host's sitemaps and those
   * their records list, queues the ones not fetched yet and, with --recrawl-after, makes
   * the others due. A sitemap seen before in this run is left as it is.
   */
  async discover(host: HostState, robotsSitemaps: readonly string[]): Promise<void> {
    const raw = [...(this.#d.fromRobots ? robotsSitemaps : []), ...(await this.#seedUrls())];
    for (const r of raw) {
      const n = normalizeUrl(r, undefined, this.#d.normalize);
      // Sitemaps of another host (robots.txt may name them) are left to that host's own robots.txt or --sitemap.
      if (n.ok && n.hostDir === host.dir) await this.#walk(host, n.url, 0);
    }
  }

  /** Fetches a sitemap (a URL `isSitemap` said yes to). */
  async fetch(target: Target, ctx: SitemapContext): Promise<PageOutcome> {
    const level = this.#known.get(target.hostDir)?.get(target.key) ?? 0;
    const r = await fetchSitemap(target, ctx);
    for (const child of r.children) {
      if (level < SITEMAP_MAX_NESTING) this.#register(target.hostDir, urlKey(child), level + 1);
    }
    if (r.children.length > 0 && level >= SITEMAP_MAX_NESTING) {
      this.#d.log.warn('sitemap index nested too deep: its sitemaps are fetched as pages', { url: target.url, level });
    }
    if (r.hints.length > 0) this.#hints.set(r.outcome, r.hints);
    return r.outcome;
  }

  /** After a sitemap's record is written: its `<lastmod>`s may make pages due (--recrawl-after). */
  committed(host: HostState, outcome: PageOutcome): void {
    const hints = this.#hints.get(outcome);
    const recrawler = this.#d.recrawler;
    if (hints === undefined || recrawler === undefined) return;
    let due = 0;
    for (const h of hints) if (recrawler.makeDue(host, h.key, h.lastmodMs)) due++;
    if (due > 0) this.#d.log.info('sitemap lastmod made pages due', { host: host.dir, pages: due });
  }

  /** Registers a sitemap; fetched before: its children too (and with --recrawl-after it is due again); else queued. */
  async #walk(host: HostState, url: string, level: number): Promise<void> {
    const key = urlKey(url);
    if (this.isSitemap(host.dir, key)) return;
    this.#register(host.dir, key, level);
    const read = await readRecord(this.#d.layout.mount, this.#d.layout.links(host.dir, key), asLinksRecord);
    if (read.kind !== 'value') {
      this.#d.offer(url, host.dir, level);
      return;
    }
    const record = read.value;
    this.#d.recrawler?.makeDue(host, key);
    if (record.sitemap?.kind !== 'index' || level >= SITEMAP_MAX_NESTING) return;
    for (const child of record.links) {
      if (hostDirOfNormalized(child) === host.dir) await this.#walk(host, child, level + 1);
    }
  }

  #register(hostDir: string, key: string, level: number): void {
    let keys = this.#known.get(hostDir);
    if (keys === undefined) this.#known.set(hostDir, (keys = new Map()));
    if (!keys.has(key)) keys.set(key, level);
  }

  /** The URLs given with --sitemap by any node (sitemaps/<key>.url), read again every few seconds. */
  async #seedUrls(): Promise<string[]> {
    const now = this.#d.clock.monotonic();
    if (this.#seeds === undefined || now - this.#seeds.readAt > SEEDS_REREAD_MS) {
      const urls = this.#seeds?.urls ?? new Map<string, string>();
      let names: string[] = [];
      try {
        names = await this.#d.layout.fs.readdir(this.#d.layout.sitemapSeeds());
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      for (const name of names) {
        if (!name.endsWith('.url') || urls.has(name)) continue;
        urls.set(name, (await this.#d.layout.fs.readFile(`${this.#d.layout.sitemapSeeds()}/${name}`)).toString('utf8').trim());
      }
      this.#seeds = { urls, readAt: now };
    }
    return [...this.#seeds.urls.values()];
  }
}

/** True when sitemaps/ holds a --sitemap URL of some node's command line. */
export async function hasSitemapSeeds(layout: Layout): Promise<boolean> {
  try {
    return (await layout.fs.readdir(layout.sitemapSeeds())).some((n) => n.endsWith('.url'));
  } catch {
    return false;
  }
}

/** Writes the --sitemap URLs (normalized again with the data directory's rules) to sitemaps/<key>.url, where every node finds them. */
export async function writeSitemapSeeds(
  layout: Layout,
  raw: readonly string[],
  normalize: NormalizeOptions,
  options: { nodeId: string },
): Promise<void> {
  const urls = raw.flatMap((u) => {
    const r = normalizeUrl(u, undefined, normalize);
    return r.ok ? [r.url] : [];
  });
  if (urls.length === 0) return;
  // Not recursive: a vanished mount fails here rather than growing a local tree.
  await layout.fs.mkdir(layout.sitemapSeeds()).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  for (const url of urls)
    await writeFileAtomic(layout.mount, `${layout.sitemapSeeds()}/${urlKey(url)}.url`, `${url}\n`, {
      nodeId: options.nodeId,
      fsync: false,
    });
}
