import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CheerioAPI } from 'cheerio';
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
  /** The links mountcrawl found (absolute, normalized), or as the --hook module before this one left them. */
  readonly links: readonly string[];
  /** The data a --hook module before this one returned, if any. */
  readonly data?: unknown;
}

/** What onPage may return: links to use instead of the ones found, data to store in the links record. */
export interface HookResult {
  readonly links?: readonly string[];
  readonly data?: unknown;
}

/** What a request is for: a page, a sitemap (docs/sitemaps.md) or a host's robots.txt. */
export type RequestKind = 'page' | 'robots' | 'sitemap';

/** What a hook's beforeFetch sees: the request about to be sent (docs/hooks.md). */
export interface HookRequest {
  /** The normalized URL of this request (a redirect's next hop has its own). */
  readonly url: string;
  readonly depth: number;
  /** The host's directory name (docs/url-keys.md). */
  readonly host: string;
  /** What the request is for: every kind goes through the same steps. */
  readonly kind: RequestKind;
  /** The request headers, lowercase names: what the built-in steps set; change them in place. */
  headers: Record<string, string>;
}

/** What afterFetch decides (docs/hooks.md); `verdict` of a response holds the decision so far. */
export type HookVerdict =
  | { readonly action: 'accept' }
  | { readonly action: 'retry'; readonly delayMs?: number; readonly reason?: string }
  | { readonly action: 'error'; readonly reason?: string; readonly transient?: boolean }
  | { readonly action: 'drop'; readonly reason?: string };

/** What a hook's afterFetch sees of a response. */
export interface HookResponse {
  readonly url: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly contentType: string | null;
  /** The body as text (UTF-8), when it was read (2xx HTML); null otherwise. */
  readonly text: string | null;
  /** What the steps before this one decided (the built-in step: accept 2xx, retry transient, error otherwise). */
  readonly verdict: HookVerdict;
  /** True when a beforeFetch answered it (no request was sent). */
  readonly synthetic: boolean;
}

/**
 * What beforeFetch may return: nothing (go on), a skip, or an answer without the network. The
 * request itself (or any object with `headers` and no `action`) also means "send it", with
 * those headers.
 */
export type BeforeFetchResult =
  | void
  | undefined
  | HookRequest
  | { readonly action: 'skip'; readonly reason?: string }
  | {
      readonly action: 'respond';
      readonly status?: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body?: string;
    };

/** What priority's context holds (all of it known again at a reseed: the priority is not stored). */
export interface PriorityContext {
  readonly depth: number;
  readonly host: string;
  /** The priority so far: the default (minus the depth: breadth first) or the previous module's. */
  readonly priority: number;
}

type Awaitable<T> = T | Promise<T>;

/**
 * One `--hook FILE` module (docs/hooks.md, in the manner of Scrapy's middlewares). Every entry
 * point is optional and may be async (filter excepted: it is called in the admission chain,
 * synchronously):
 *
 * - `filter(url)`: return false and the URL is not crawled (like --exclude, in code);
 * - `beforeFetch(request)`: change `request.headers`, skip the URL, or answer it;
 * - `afterFetch(request, response)`: accept, retry, drop, or make it an error;
 * - `onPage(page)`: called for each HTML page before it is stored; may return
 *   `{ links, data }`: `links` replace the links found (they are normalized again), `data`
 *   (anything JSON can hold, a list of items too) is stored in the links record as `"data"`;
 * - `priority(url, context)`: a number; higher is fetched first within its host.
 *
 * Modules run in the order given on the command line. Every node loads the same files.
 */
export interface HookModule {
  readonly file: string;
  filter?(url: string): boolean;
  beforeFetch?(request: HookRequest): Awaitable<BeforeFetchResult>;
  afterFetch?(request: HookRequest, response: HookResponse): Awaitable<HookVerdict | void | undefined>;
  onPage?(page: HookPage): Awaitable<HookResult | void>;
  priority?(url: string, context: PriorityContext): Awaitable<number | void | undefined>;
}

/** The --hook modules, in the order given (empty: none). */
export type Hooks = readonly HookModule[];

const ENTRY_POINTS = ['filter', 'beforeFetch', 'afterFetch', 'onPage', 'priority'] as const;

/** Loads and checks the hook modules; throws BAD_OPTION with one line when one cannot be used. */
export async function loadHooks(files: readonly string[]): Promise<Hooks> {
  const modules: HookModule[] = [];
  for (const file of files) modules.push(await loadHookModule(file));
  return modules;
}

async function loadHookModule(file: string): Promise<HookModule> {
  const path = resolve(file);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (err) {
    throw new FatalError('BAD_OPTION', `--hook ${file}: cannot load it: ${hookLoadReason(err, path)}`, ExitCode.USAGE);
  }
  const hooks: Record<string, unknown> = { file };
  for (const name of ENTRY_POINTS) {
    const fn = mod[name];
    if (fn === undefined) continue;
    if (typeof fn !== 'function') {
      throw new FatalError('BAD_OPTION', `--hook ${file}: export ${name} is not a function`, ExitCode.USAGE);
    }
    hooks[name] = fn;
  }
  if (Object.keys(hooks).length === 1) {
    throw new FatalError('BAD_OPTION', `--hook ${file}: exports none of ${ENTRY_POINTS.join(', ')}`, ExitCode.USAGE);
  }
  // cheerio is loaded only for an onPage hook: a crawl without one starts without it
  // (a quarter of the start-up's module loading, docs/benchmarks-log.md, "What changed").
  if (hooks.onPage !== undefined) cheerioLoad ??= (await import('cheerio')).load;
  return hooks as unknown as HookModule;
}

let cheerioLoad: typeof import('cheerio').load | undefined;

/**
 * Why a hook module did not load, in terms of the user's file: a missing file says so (not
 * "imported from" a file inside this package), and an error's class is kept (SyntaxError).
 */
function hookLoadReason(err: unknown, path: string): string {
  const e = err as NodeJS.ErrnoException;
  if (!existsSync(path)) return `no such file: ${path}`;
  const first = String(e?.message ?? err)
    .split('\n')[0]!
    .replace(/ imported from \S*\/dist\/src\/\S*$/, '');
  return e instanceof SyntaxError ? `SyntaxError in ${path}: ${first}` : first;
}

/** The page a hook sees (loadHooks ran first), with `$` parsed only when it is used. */
export function hookPage(fields: Omit<HookPage, '$'>): HookPage {
  let doc: CheerioAPI | undefined;
  return {
    ...fields,
    get $(): CheerioAPI {
      doc ??= cheerioLoad!(fields.html, { xml: { xmlMode: false, decodeEntities: true } });
      return doc;
    },
  };
}

/** Counts a --hook failure and reports the first few (the crawl goes on with the documented fallback). */
export function hookFailed(to: { readonly stats: CrawlStats; readonly log: Logger }, what: string, err: unknown): void {
  to.stats.hookErrors++;
  if (to.stats.hookErrors <= 5) to.log.warn(`--hook ${what} threw: ${describeError(err)}`);
}
