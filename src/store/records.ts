/**
 * The records a node writes (docs/protocol.md, "What is on the mount"). A links record is the commit record of a fetched
 * URL: the key is done once it exists. An errs record says why a URL failed and whether it
 * is worth another attempt. Both are pretty-printed JSON for people to read; `v` is the
 * record format version.
 */

export const RECORD_VERSION = 1;

/** One hop of a redirect chain. */
export interface RedirectHop {
  readonly url: string;
  readonly status: number;
  readonly location: string;
}

export interface LinksRecord {
  readonly v: number;
  /** The normalized URL this record is for (its key is the SHA-224 of this string). */
  readonly url: string;
  /** Where the fetch ended after redirects this node followed. */
  readonly finalUrl: string;
  /** HTTP status of the first response (a 3xx for a URL that redirected). */
  readonly status: number;
  readonly contentType: string | null;
  /** Decoded body bytes kept (0 when the body was not read). */
  readonly bytes: number;
  /** True when the body was cut at --max-bytes. */
  readonly truncated?: boolean;
  /** Wall-clock time of the fetch, ISO 8601. */
  readonly fetchedAt: string;
  /**
   * With --warc: the WARC-Date (the request's start) of the response record whose content is
   * stored; kept across a 304, so that a revisit names it exactly (docs/warc.md).
   */
  readonly capturedAt?: string;
  /** Hops from a seed. */
  readonly depth: number;
  /** Id of the node that wrote the record. */
  readonly node: string;
  readonly durationMs: number;
  /** Path of the stored body relative to the data directory, or null when none is stored. */
  readonly html: string | null;
  readonly charset?: string;
  readonly etag?: string;
  readonly lastModified?: string;
  /** The hops this URL went through, when it redirected. */
  readonly redirects?: readonly RedirectHop[];
  /** What the user's --hook onPage returned as data. */
  readonly data?: unknown;
  /** Absolute, normalized, deduplicated links found (or the redirect target). */
  /** Where the body of a non-HTML response kept with --keep is (`files/<host>/<key>.<ext>`). */
  readonly file?: string;
  /** Robots directives of the page (`noindex`: html not kept; `nofollow`: links not followed). */
  readonly robots?: readonly string[];
  readonly links: readonly string[];
  /** Recrawl (docs/recrawl.md): MD5 of the stored body. */
  readonly signature?: string;
  /** Recrawl: when a visit last found the page changed (or first fetched it), ISO 8601. */
  readonly changedAt?: string;
  /** Recrawl: the revisit interval in force after the last visit, ms. */
  readonly intervalMs?: number;
  /** Recrawl: when the page is due again, ISO 8601. */
  readonly nextFetchAt?: string;
  /** Recrawl: the last few visits, newest last. */
  readonly history?: readonly VisitEntry[];
  /** A sitemap (docs/sitemaps.md): its `links` are its pages, or its child sitemaps for an index. */
  readonly sitemap?: SitemapInfo;
}

/** What a sitemap held (docs/sitemaps.md). */
export interface SitemapInfo {
  /** `feed`: an RSS or Atom feed, read as a list of pages. */
  readonly kind: 'urlset' | 'index' | 'feed';
  /** Entries read (before normalization). */
  readonly entries: number;
  /** Entries beyond the cap, not kept. */
  readonly dropped?: number;
  /** Why reading stopped early (the entries before it are kept). */
  readonly error?: string;
}

/** One visit of a page, as kept in its links record's history (docs/recrawl.md). */
export interface VisitEntry {
  /** Wall-clock time of the visit, ISO 8601. */
  readonly at: string;
  readonly status: number;
  readonly changed: boolean;
  /** Body bytes downloaded (0 for a 304). */
  readonly bytes: number;
}

/** The page a URL was first found on (docs/protocol.md, errs records): its URL and depth. */
export interface Referrer {
  readonly url: string;
  readonly depth: number;
}

export interface ErrsRecord {
  readonly v: number;
  readonly url: string;
  /** Stable error code (docs/errors.md). */
  readonly code: string;
  readonly message: string;
  readonly status?: number;
  /** True when no further attempt will be made. */
  readonly final: boolean;
  readonly attempts: number;
  readonly firstAt: string;
  readonly lastAt: string;
  /** When the next attempt may be made (ISO 8601), or null when final. */
  readonly nextAttemptAt: string | null;
  readonly depth: number;
  readonly node: string;
  /** The page that linked to the URL, the first one found (none for a seed or a sitemap's URL). */
  readonly referrer?: Referrer;
}

/** The kind of a JSON value, as a reader of a record checks it. */
export type ValueKind = 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object';

/** The fields a record must have at its top level, each of its kind: what every reader of such a record relies on. */
export type RecordShape = Readonly<Record<string, ValueKind>>;

/** The fields every reader of a links record relies on. */
export const LINKS_SHAPE: RecordShape = { url: 'string', depth: 'number', links: 'array' };
/** The fields every reader of an errs record relies on. */
export const ERRS_SHAPE: RecordShape = { url: 'string', code: 'string', final: 'boolean', attempts: 'number' };

function kindOf(value: unknown): ValueKind | undefined {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'boolean' || t === 'object' ? t : undefined;
}

/** True when every field of `shape` has its kind, `kindOfField` telling the kind of a field (undefined: absent). */
export function shapeHolds(shape: RecordShape, kindOfField: (field: string) => ValueKind | undefined): boolean {
  for (const field in shape) if (kindOfField(field) !== shape[field]) return false;
  return true;
}

function checkShape(value: unknown, shape: RecordShape, what: string): void {
  const r = value as Record<string, unknown> | null;
  if (r === null || typeof r !== 'object' || !shapeHolds(shape, (field) => kindOf(r[field]))) throw new TypeError(`not a valid ${what}`);
}

/** Checks that a parsed value has the fields every reader of a links record relies on (LINKS_SHAPE). */
export function asLinksRecord(value: unknown): LinksRecord {
  checkShape(value, LINKS_SHAPE, 'links record');
  return value as LinksRecord;
}

/** Checks that a parsed value has the fields every reader of an errs record relies on (ERRS_SHAPE). */
export function asErrsRecord(value: unknown): ErrsRecord {
  checkShape(value, ERRS_SHAPE, 'errs record');
  return value as ErrsRecord;
}

/** The text written for a record: indented JSON, one link per line, ending in a newline. */
export function serializeRecord(record: LinksRecord | ErrsRecord): string {
  return `${JSON.stringify(record, null, 1)}\n`;
}
