import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { Agent, EnvHttpProxyAgent, request, type Dispatcher } from 'undici';
import { keeps } from './keep-types.js';
import type { Clock } from '../config/clock.js';
import { FetchFailure } from '../errors.js';
import { isPrivateAddress, publicOnlyLookup } from './address-policy.js';
import { classifyFetchError } from './classify-error.js';
import { readBody, streamBody } from './read-body.js';
import { headerValue } from './header-value.js';
import { defaultRequestHeaders } from './request-headers.js';
import { headersFromRaw, readSideBody, type CaptureSink } from '../warc/exchange.js';

/** The part of the configuration the fetcher needs. */
export interface FetcherOptions {
  readonly userAgent: string;
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly maxBytes: number;
  readonly perHost: number;
  readonly insecure: boolean;
  readonly denyPrivate: boolean;
  /** Media types of non-HTML responses whose bodies are read too (--keep). */
  readonly keepTypes?: readonly string[];
  /**
   * Proxies (--proxy, or HTTP_PROXY / HTTPS_PROXY / NO_PROXY read by the CLI): requests go
   * through undici's EnvHttpProxyAgent with these settings.
   */
  readonly proxy?: { readonly http?: string; readonly https?: string; readonly noProxy?: string };
}

/** One HTTP response (one hop: redirects are the caller's business). */
export interface FetchedResponse {
  readonly url: string;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The Content-Type header without parameters, lowercased; null when absent. */
  readonly mediaType: string | null;
  readonly contentType: string | null;
  /** Decoded body, when it was read (2xx HTML); null otherwise, and when it went to `consumeBody`. */
  readonly body: Buffer | null;
  readonly truncated: boolean;
  readonly durationMs: number;
  /**
   * With a capture (--warc): the wall time the request was sent, which is its response
   * record's WARC-Date; a links record keeps it as `capturedAt` (docs/warc.md).
   */
  readonly capturedMs?: number;
}

/** Extra request headers for a conditional GET (recrawl). */
export interface Validators {
  readonly etag?: string;
  readonly lastModified?: string;
  /**
   * The stored copy they come from (not sent): a 304's WARC revisit record refers to it, by
   * URL and by its capture's WARC-Date (ISO 8601).
   */
  readonly previous?: { readonly url: string; readonly date: string };
}

/** Per-request options. */
export interface FetchOptions {
  /** Aborts the request from outside (shutdown). */
  readonly signal?: AbortSignal | undefined;
  readonly validators?: Validators | undefined;
  /** Read the body of a 2xx response whatever its type (robots.txt). */
  readonly anyType?: boolean;
  /** Cap for this request instead of maxBytes. */
  readonly maxBytes?: number;
  /**
   * The request headers (lowercase names): the fetch middleware's (src/request/pipeline.ts),
   * sent as they are. Without them, the default headers only.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Reads a body that would be read (2xx) as a stream instead of holding it (a sitemap):
   * `consume` gets the decoded bytes as they arrive and applies its own limits, and the
   * response's `body` is null. Not with a WARC capture, which needs the body whole: then the
   * body is read up to the cap as usual (docs/sitemaps.md).
   */
  readonly consumeBody?: ((body: Readable) => Promise<void>) | undefined;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** True for a media type whose body is read and parsed for links. */
export function isHtmlType(mediaType: string | null): boolean {
  return mediaType === null || HTML_TYPES.has(mediaType);
}

/**
 * Fetches one URL with one shared undici Agent (keep-alive, at most `perHost` connections
 * per origin). Every request has a connect timeout, headers and idle-body timeouts and a
 * total deadline that also covers the body, so a server that drips one byte a second loses
 * its slot at the deadline. Bodies of 2xx HTML responses are read and decoded up to
 * `maxBytes`; other bodies are discarded unread. Network failures are thrown as FetchFailure.
 */
export class Fetcher {
  readonly #options: FetcherOptions;
  readonly #clock: Clock;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  /** Gets every exchange that had a response (--warc); the fetcher then also reads error bodies. */
  readonly #capture: CaptureSink | undefined;

  constructor(options: FetcherOptions, deps: { clock: Clock; dispatcher?: Dispatcher; capture?: CaptureSink | undefined }) {
    this.#options = options;
    this.#clock = deps.clock;
    this.#capture = deps.capture;
    this.#ownsDispatcher = deps.dispatcher === undefined;
    const agentOptions = {
      connections: Math.max(1, options.perHost),
      keepAliveTimeout: 10_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: Math.min(options.timeoutMs, 30_000),
      connect: {
        timeout: options.connectTimeoutMs,
        rejectUnauthorized: !options.insecure,
        ...(options.denyPrivate ? { lookup: publicOnlyLookup } : {}),
      },
    };
    const proxy = options.proxy;
    this.#dispatcher =
      deps.dispatcher ??
      (proxy !== undefined && (proxy.http !== undefined || proxy.https !== undefined)
        ? new EnvHttpProxyAgent({
            ...agentOptions,
            // An empty string means "no proxy for this scheme" to undici (not "read the environment").
            httpProxy: proxy.http ?? '',
            httpsProxy: proxy.https ?? '',
            noProxy: proxy.noProxy ?? '',
            ...(options.insecure ? { requestTls: { rejectUnauthorized: false } } : {}),
          })
        : new Agent(agentOptions));
  }

  /** Fetches `url` (GET, no redirects followed). */
  async fetch(url: string, options: FetchOptions = {}): Promise<FetchedResponse> {
    const { signal, validators } = options;
    const started = this.#clock.monotonic();
    const capture = this.#capture;
    const startedMs = capture === undefined ? 0 : this.#clock.now();
    if (this.#options.denyPrivate) this.#refuseLiteralPrivate(url);
    const deadline = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.abort();
    }, this.#options.timeoutMs);
    const onOuterAbort = (): void => deadline.abort();
    signal?.addEventListener('abort', onOuterAbort, { once: true });
    if (signal?.aborted) deadline.abort();
    try {
      // The middleware's headers: the defaults, --header and --cookie-file are its built-in
      // steps, which a hook can see and change (docs/hooks.md).
      const headers = { ...(options.headers ?? defaultRequestHeaders(this.#options.userAgent)) };
      if (validators?.etag) headers['if-none-match'] = validators.etag;
      if (validators?.lastModified) headers['if-modified-since'] = validators.lastModified;
      // What a hook set stands, a validator header included.
      if (options.headers !== undefined) Object.assign(headers, options.headers);
      const res = await request(url, {
        method: 'GET',
        headers,
        dispatcher: this.#dispatcher,
        signal: deadline.signal,
        ...(capture === undefined ? {} : { responseHeaders: 'raw' as const }),
      });
      // With a capture, undici hands the header lines as received; the crawler gets the usual object.
      const rawHeaders = capture === undefined ? undefined : (res.headers as unknown as string[]);
      const resHeaders = rawHeaders === undefined ? res.headers : headersFromRaw(rawHeaders);
      const contentType = headerValue(resHeaders, 'content-type') ?? null;
      const mediaType = contentType === null ? null : contentType.split(';')[0]!.trim().toLowerCase();
      let body: Buffer | null = null;
      let truncated = false;
      let side: { body: Buffer; truncated: boolean } | undefined;
      if (
        res.statusCode >= 200 &&
        res.statusCode < 300 &&
        (options.anyType || isHtmlType(mediaType) || keeps(this.#options.keepTypes, mediaType))
      ) {
        if (options.consumeBody !== undefined && capture === undefined) {
          await streamBody(res.body, headerValue(resHeaders, 'content-encoding'), options.consumeBody);
        } else {
          const read = await readBody(res.body, headerValue(resHeaders, 'content-encoding'), options.maxBytes ?? this.#options.maxBytes);
          body = read.body;
          truncated = read.truncated;
        }
      } else if (capture !== undefined) {
        side = await readSideBody(res.body, headerValue(resHeaders, 'content-encoding'));
      } else {
        // Small error pages are drained so the connection can be reused; big ones close it.
        await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      }
      capture?.capture({
        url,
        startedMs,
        requestHeaders: headers,
        status: res.statusCode,
        statusText: res.statusText ?? '',
        rawHeaders: rawHeaders!,
        body: side?.body ?? body,
        truncated: side?.truncated ?? truncated,
        ...(validators?.previous === undefined ? {} : { refersTo: validators.previous }),
      });
      return {
        url,
        status: res.statusCode,
        headers: resHeaders,
        mediaType,
        contentType,
        body,
        truncated,
        durationMs: Math.round(this.#clock.monotonic() - started),
        ...(capture === undefined ? {} : { capturedMs: startedMs }),
      };
    } catch (err) {
      if (signal?.aborted && !timedOut) throw new FetchFailure('ABORTED', 'transient', 'stopped', { cause: err });
      throw classifyFetchError(err, timedOut);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onOuterAbort);
    }
  }

  #refuseLiteralPrivate(url: string): void {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && isPrivateAddress(host)) {
      throw new FetchFailure('PRIVATE_ADDRESS', 'final', `${host} is a private address (--deny-private)`);
    }
  }

  /** Closes the connections (when the agent is our own). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }
}
