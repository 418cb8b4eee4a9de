import type { FetchFailure } from '../errors.js';
import type { RedirectHop, Referrer, SitemapInfo } from '../store/records.js';
import type { FetchedResponse } from './fetcher.js';

/*
 * What fetching one URL comes to, the hand-over between the request pipeline (which makes
 * it: src/crawl/fetch-page.ts, src/sitemap/fetch-sitemap.ts) and the committer (which
 * writes it: src/commit/committer.ts). Defined here, below both, so neither imports the other.
 */

/** A URL to fetch. */
export interface Target {
  readonly url: string;
  readonly key: string;
  readonly hostDir: string;
  readonly depth: number;
  /** Its place in the host's queue (a retry keeps it). */
  readonly priority?: number;
  /** The page that linked to it (QueueItem); a redirect target has the chain start's. */
  readonly referrer?: Referrer;
}

/** What one URL of a fetch chain came to: a page (or redirect) to commit, or a failure. */
export type Commit =
  | {
      readonly type: 'page';
      readonly target: Target;
      readonly response: FetchedResponse;
      readonly finalUrl: string;
      readonly redirects: readonly RedirectHop[];
      readonly body: Buffer | null;
      readonly charset?: string;
      readonly links: readonly string[];
      /** The body of a non-HTML response kept with --keep, and its file name extension. */
      readonly file?: { readonly body: Buffer; readonly ext: string };
      /** Robots directives the page carried (`noindex`: its html is not kept; `nofollow`: no links). */
      readonly robots?: readonly string[];
      /** What a --hook onPage returned as data. */
      readonly data?: unknown;
      /** A revisit answered 304 Not Modified (docs/recrawl.md): the stored body stands. */
      readonly notModified?: boolean;
      /** A sitemap (docs/sitemaps.md): what it held; its links are its entries. */
      readonly sitemap?: SitemapInfo;
    }
  | { readonly type: 'error'; readonly target: Target; readonly failure: FetchFailure };

/** The result of crawling one URL: commits in the order they must be written. */
export interface PageOutcome {
  /** The fetched page (or failure) first, then the URLs that redirected to it. */
  readonly commits: Commit[];
  /** Links dropped because they were too long. */
  readonly tooLong: number;
  /** Requests made (one per hop). */
  readonly requests: number;
  /** Redirect targets this chain claimed (committed or not): the caller releases them. */
  readonly claimed: readonly Target[];
}
