import { fastResolve, type FastBase, type UrlParts } from './fast-resolve.js';
import { hostDirOfNormalized } from './host-dir.js';

/**
 * URL normalization: the on-disk contract (docs/url-keys.md). Two spellings of one address
 * must give the same string, so that they give the same key; anything else must stay
 * exactly as it was, so that the server gets the URL it published.
 *
 * Any change here changes keys and orphans existing data: bump NORMALIZATION_VERSION,
 * update the fixed vectors in test/unit/url/normalize.test.ts and say so in docs/url-keys.md.
 */
export const NORMALIZATION_VERSION = 1;

/** Query and path parameters removed by default (compared case-insensitively). */
export const DEFAULT_SESSION_PARAMS: readonly string[] = Object.freeze([
  'sid',
  'sessionid',
  'session_id',
  'phpsessid',
  'jsessionid',
  'aspsessionid',
  'cfid',
  'cftoken',
]);

/** Default longest URL (in characters of the normalized form, which is ASCII). */
export const DEFAULT_MAX_URL_LENGTH = 8192;

export interface NormalizeOptions {
  /** Lowercase parameter names to drop from the query and from `;name=value` path parameters. */
  readonly sessionParams: ReadonlySet<string>;
  /** Normalized URLs longer than this are rejected with reason `too-long`. */
  readonly maxUrlLength: number;
}

export const DEFAULT_NORMALIZE_OPTIONS: NormalizeOptions = Object.freeze({
  sessionParams: new Set(DEFAULT_SESSION_PARAMS),
  maxUrlLength: DEFAULT_MAX_URL_LENGTH,
});

/** Why a URL was not accepted. */
export type RejectReason = 'invalid' | 'scheme' | 'too-long' | 'unsafe-host';

export type NormalizeResult =
  | { readonly ok: true; readonly url: string; readonly hostDir: string }
  | { readonly ok: false; readonly reason: RejectReason };

/**
 * Normalizes `input`, resolved against `base` when it is relative:
 * WHATWG parsing (scheme and host lowercased, punycode hosts, default port dropped, dot
 * segments resolved, raw spaces and non-ASCII percent-encoded as UTF-8); one trailing dot of
 * the host dropped; user info and fragment dropped; session-id parameters removed; an empty
 * query dropped. Existing
 * percent-escapes are kept byte for byte. Only http and https are accepted.
 */
export function normalizeUrl(input: string, base?: string | URL, options: NormalizeOptions = DEFAULT_NORMALIZE_OPTIONS): NormalizeResult {
  let u: URL;
  try {
    u = base === undefined ? new URL(input) : new URL(input, base);
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { ok: false, reason: 'scheme' };
  return normalizeParts(u, options);
}

/**
 * Normalizes a link found on a page: the fast path of src/url/fast-resolve.ts for the common
 * spellings, `normalizeUrl` (WHATWG) for the rest. Gives exactly what
 * `normalizeUrl(href, baseUrl, options)` gives (test/unit/url/fast-resolve.test.ts).
 */
export function normalizeLink(
  href: string,
  baseUrl: URL,
  fastBase: FastBase | undefined,
  options: NormalizeOptions = DEFAULT_NORMALIZE_OPTIONS,
): NormalizeResult {
  const parts = fastResolve(href, fastBase);
  return parts === undefined ? normalizeUrl(href, baseUrl, options) : normalizeParts(parts, options);
}

/** The rest of normalization, on an http(s) URL taken apart (by WHATWG or the fast path). */
function normalizeParts(u: UrlParts, options: NormalizeOptions): NormalizeResult {
  const { hostname, port } = u;
  if (hostname === '') return { ok: false, reason: 'invalid' };
  const path = stripPathParams(u.pathname, options.sessionParams);
  const query = stripQueryParams(u.search, options.sessionParams);
  // `example.com.` (fully qualified) is the same server as `example.com`.
  const name = hostname.endsWith('.') && hostname.length > 1 ? hostname.slice(0, -1) : hostname;
  const url = `${u.protocol}//${name}${port === '' ? '' : `:${port}`}${path}${query}`;
  if (url.length > options.maxUrlLength) return { ok: false, reason: 'too-long' };
  const hostDir = hostDirOfNormalized(url);
  if (hostDir === undefined) return { ok: false, reason: 'unsafe-host' };
  return { ok: true, url, hostDir };
}

/** Removes `;name=value` path parameters whose name is a session parameter. */
function stripPathParams(pathname: string, names: ReadonlySet<string>): string {
  if (!pathname.includes(';') || names.size === 0) return pathname;
  return pathname.replace(/;([^/;=]*)=[^/;]*/g, (whole, name: string) => (names.has(name.toLowerCase()) ? '' : whole));
}

/**
 * Removes session parameters from a raw query (`?a=1&sid=2`), keeping every other byte
 * and the order as it was. `?` alone, or nothing left, gives ''.
 */
function stripQueryParams(search: string, names: ReadonlySet<string>): string {
  if (search.length <= 1) return '';
  if (names.size === 0) return search;
  const parts = search.slice(1).split('&');
  const kept = parts.filter((part) => {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).toLowerCase();
    return !names.has(name);
  });
  if (kept.length === parts.length) return search;
  const rest = kept.join('&');
  return rest === '' ? '' : `?${rest}`;
}
