import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { load, type CheerioAPI } from 'cheerio';
import { ExitCode, FatalError, describeError } from '../errors.js';
import type { Logger } from '../progress/logger.js';
import type { CrawlStats } from '../progress/stats.js';

/** What a hook's onPage sees of a fetched HTML page. */
export interface HookPage {
  /** The normalized URL. */
  readonly url: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly depth: number;
  /** The body decoded in its charset. */
  readonly html: string;
  /** The page as a cheerio document (htmlparser2 parser), built the first time it is read. */
  readonly $: CheerioAPI;
  /** The links mountcrawl found (absolute, normalized). */
  readonly links: readonly string[];
}

/** What onPage may return: links to use instead of the ones found, data to store in the links record. */
export interface HookResult {
  readonly links?: readonly string[];
  readonly data?: unknown;
}

/**
 * A user's own code around the crawl (docs/hooks.md, in the manner of Scrapy's spider
 * middleware), loaded from an ES module given with `--hook FILE` that exports either or both:
 *
 * - `filter(url)`: return false and the URL is not crawled (like --exclude, in code);
 * - `onPage(page)`: called for each HTML page before it is stored; may return
 *   `{ links, data }`: `links` replace the links found (they are normalized again), `data`
 *   (anything JSON can hold) is stored in the page's links record as `"data"`.
 *
 * Both may be async. Every node loads the same file.
 */
export interface Hooks {
  filter?(url: string): boolean;
  onPage?(page: HookPage): HookResult | void | Promise<HookResult | void>;
}

/** Loads and checks a hook module; throws BAD_OPTION with one line when it cannot be used. */
export async function loadHooks(file: string): Promise<Hooks> {
  const path = resolve(file);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (err) {
    throw new FatalError('BAD_OPTION', `--hook ${file}: cannot load it: ${(err as Error).message.split('\n')[0]}`, ExitCode.USAGE);
  }
  const hooks: Hooks = {};
  for (const name of ['filter', 'onPage'] as const) {
    const fn = mod[name];
    if (fn === undefined) continue;
    if (typeof fn !== 'function') {
      throw new FatalError('BAD_OPTION', `--hook ${file}: export ${name} is not a function`, ExitCode.USAGE);
    }
    (hooks as Record<string, unknown>)[name] = fn;
  }
  if (hooks.filter === undefined && hooks.onPage === undefined) {
    throw new FatalError('BAD_OPTION', `--hook ${file}: exports neither filter nor onPage`, ExitCode.USAGE);
  }
  return hooks;
}

/** The page a hook sees, with `$` parsed only when it is used. */
export function hookPage(fields: Omit<HookPage, '$'>): HookPage {
  let doc: CheerioAPI | undefined;
  return {
    ...fields,
    get $(): CheerioAPI {
      doc ??= load(fields.html, { xml: { xmlMode: false, decodeEntities: true } });
      return doc;
    },
  };
}

/** Counts a --hook failure and reports the first few (the crawl goes on as if the hook were absent). */
export function hookFailed(to: { readonly stats: CrawlStats; readonly log: Logger }, what: string, err: unknown): void {
  to.stats.hookErrors++;
  if (to.stats.hookErrors <= 5) to.log.warn(`--hook ${what} threw: ${describeError(err)}`);
}
