import { surt } from './surt.js';

/** What a CDXJ line says about one response record (pywb's CDXJ fields). */
export interface CdxEntry {
  readonly url: string;
  /** The URL's SURT form as pywb computes it (surt.ts), the key the index is sorted by. */
  readonly surt: string;
  /** WARC-Date of the record, ISO 8601. */
  readonly date: string;
  readonly status: number;
  /** Media type of the payload (Content-Type without parameters), '-' when none. */
  readonly mime: string;
  /** WARC-Payload-Digest. */
  readonly digest: string;
  /** Byte offset of the record's gzip member in the WARC file. */
  readonly offset: number;
  /** Length of the record's gzip member. */
  readonly length: number;
  /** The WARC file's final name (without the `.open` of a file being written). */
  readonly filename: string;
}

/** The SURT key of a URL as pywb looks it up (the URL itself when it has none: an invalid port). */
export function surtOf(url: string): string {
  try {
    return surt(url);
  } catch {
    return url;
  }
}

/** The 14-digit timestamp (yyyyMMddHHmmss, UTC) of CDX indexes. */
export function cdxTimestamp(isoDate: string): string {
  return isoDate.replace(/[^0-9]/g, '').slice(0, 14);
}

/**
 * One CDXJ line: `SURT timestamp {json}` and a newline, the index format pywb and
 * ReplayWeb.page read. Lines are appended in the order records are written; the index of a
 * closed file is sorted (sortCdxj).
 */
export function cdxjLine(e: CdxEntry): string {
  const json = {
    url: e.url,
    // No Content-Type, no mime field (as warcio's indexer writes it).
    ...(e.mime === '-' ? {} : { mime: e.mime }),
    // A revisit's line has no status (pywb's indexer gives one to response records only):
    // pywb and wabac.js take it from the capture the revisit resolves to.
    ...(e.mime === 'warc/revisit' ? {} : { status: String(e.status) }),
    // As warcio's and pywb's indexers write it: the digest without its algorithm prefix.
    // No payload digest (a server-not-modified revisit), no digest field, as warcio writes it.
    ...(e.digest === '' ? {} : { digest: e.digest.replace(/^[a-z0-9-]+:/i, '') }),
    length: String(e.length),
    offset: String(e.offset),
    filename: e.filename,
  };
  return `${e.surt} ${cdxTimestamp(e.date)} ${JSON.stringify(json)}\n`;
}

/**
 * CDXJ lines in the order replay tools binary-search (pywb, ReplayWeb.page): by SURT key,
 * then timestamp, as `LC_ALL=C sort` orders them (bytes of the whole line; the space after
 * the key sorts before any character of a key, so a key sorts before the keys it prefixes).
 * Equal lines are kept.
 */
export function sortCdxj(text: string): string {
  const lines = text.split('\n').filter((l) => l !== '');
  if (!/[\uD800-\uDFFF]/.test(text)) {
    // Without surrogate pairs, UTF-16 order is code point order, which is UTF-8 byte order.
    lines.sort();
    return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  }
  const bytes = lines.map((l) => Buffer.from(l));
  bytes.sort(Buffer.compare);
  return Buffer.concat(bytes.flatMap((l) => [l, NEWLINE])).toString();
}

const NEWLINE = Buffer.from('\n');
