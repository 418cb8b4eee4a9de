import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { readBody } from '../fetch/read-body.js';

/**
 * One HTTP request and its response as the fetcher saw them, handed to a capture (the WARC
 * writer) by the fetcher's tap. The body is the decoded one (Content-Encoding undone), as the
 * crawler keeps it; the WARC writer rewrites the headers to say so (docs/warc.md).
 */
export interface Exchange {
  readonly url: string;
  /** Wall-clock time the request started, ms since the epoch. */
  readonly startedMs: number;
  /** Request headers as the fetcher set them (undici adds `host` and `connection`). */
  readonly requestHeaders: Readonly<Record<string, string>>;
  readonly status: number;
  readonly statusText: string;
  /** Response header lines as received: name, value, name, value ... (names in their case). */
  readonly rawHeaders: readonly string[];
  /** Decoded body bytes read, or null when the crawler did not read the body at all. */
  readonly body: Buffer | null;
  /** True when the body read was cut (at --max-bytes, or the error-page cap). */
  readonly truncated: boolean;
  /** A conditional request's stored copy: a 304 is recorded as a revisit of it (docs/warc.md). */
  readonly refersTo?: { readonly url: string; readonly date: string };
}

/** Where the fetcher hands each exchange. Must not throw and must not block. */
export interface CaptureSink {
  capture(exchange: Exchange): void;
}

/**
 * The headers object undici would have built from `raw` (lowercase names, a repeated header
 * as an array), so the rest of the crawler sees the same thing with or without a capture.
 */
export function headersFromRaw(raw: readonly string[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const had = Object.hasOwn(headers, name) ? headers[name] : undefined;
    if (had === undefined) headers[name] = value;
    else if (Array.isArray(had)) had.push(value);
    else headers[name] = [had, value];
  }
  return headers as IncomingHttpHeaders;
}

/** The most bytes of a body the crawler does not need (error pages, redirects) kept for the WARC. */
export const CAPTURE_SIDE_BODY_CAP = 64 * 1024;

/**
 * Reads a body the crawler itself would only drain (a redirect's, an error page's), for the
 * WARC, up to CAPTURE_SIDE_BODY_CAP decoded bytes. Never throws: a body that cannot be read or
 * decoded is recorded as truncated with what there is (nothing).
 */
export async function readSideBody(source: Readable, contentEncoding: string | undefined): Promise<{ body: Buffer; truncated: boolean }> {
  try {
    return await readBody(source, contentEncoding, CAPTURE_SIDE_BODY_CAP);
  } catch {
    source.destroy();
    return { body: Buffer.alloc(0), truncated: true };
  }
}
