import { decodeHTMLAttribute } from 'entities';
import { Tokenizer } from 'htmlparser2';
import type { TokenizerCallbacks } from 'htmlparser2';
import { fastBaseOf } from '../url/fast-resolve.js';
import { normalizeLink, type NormalizeOptions } from '../url/normalize.js';
import { decodeBytes, isAsciiCompatible, sniffCharset } from './charset.js';

/** What the extractor found in one page. */
export interface ExtractedLinks {
  /** Absolute, normalized links, each once, in document order. */
  readonly links: string[];
  /** The encoding the page was read in. */
  readonly charset: string;
  /** Links dropped because their normalized form is longer than the limit. */
  readonly tooLong: number;
  /** Hrefs that are not URLs or not http(s) (mailto:, javascript:, tel:, data:, ...). */
  readonly skipped: number;
}

/** Tags whose href we read: links, image-map areas, and the document base. */
const enum Tag {
  Other = 0,
  Link = 1,
  Base = 2,
}

const NO_OP = (): void => undefined;

/**
 * Collects the hrefs of `<a>`, `<area>` and the first `<base>` of an HTML document with
 * htmlparser2's tokenizer: no DOM is built (4 to 8 times cheaper per page than cheerio's
 * load; see docs/benchmarks.md). In an ASCII-compatible encoding the markup is read
 * bytewise and only attribute values with non-ASCII bytes are decoded; other encodings
 * (UTF-16, ISO-2022-*) are decoded whole first.
 *
 * The tokenizer does not decode character references: it then skips text and attribute
 * values to the next `<` or quote with a plain scan (about a quarter less time per page,
 * docs/benchmarks.md), and only the few hrefs that hold a `&` are decoded, with the rules of
 * an attribute value (entities' decodeHTMLAttribute, the decoder htmlparser2 itself uses).
 */
function collectHrefs(body: Uint8Array, charset: string): { hrefs: string[]; base: string | undefined } {
  const bytewise = isAsciiCompatible(charset);
  const text = bytewise ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1') : decodeBytes(body, charset);
  const hrefs: string[] = [];
  let base: string | undefined;
  let tag = Tag.Other;
  let inHref = false;
  let hrefSeen = false; // a repeated attribute is ignored, as browsers do: the first href wins
  let value = '';

  const callbacks: TokenizerCallbacks = {
    onopentagname(start, end) {
      const len = end - start;
      tag = Tag.Other;
      hrefSeen = false;
      if (len === 1) {
        if ((text.charCodeAt(start) | 0x20) === 0x61) tag = Tag.Link; // a
      } else if (len === 4) {
        const name = text.slice(start, end).toLowerCase();
        if (name === 'area') tag = Tag.Link;
        else if (name === 'base' && base === undefined) tag = Tag.Base;
      }
    },
    onattribname(start, end) {
      inHref = tag !== Tag.Other && !hrefSeen && end - start === 4 && text.slice(start, end).toLowerCase() === 'href';
      hrefSeen ||= inHref;
      value = '';
    },
    onattribdata(start, end) {
      if (!inHref) return;
      const raw = text.slice(start, end);
      value += bytewise && /[\x80-\xff]/.test(raw) ? decodeBytes(Buffer.from(raw, 'latin1'), charset) : raw;
    },
    onattribentity: NO_OP, // not called: entities are not decoded by the tokenizer
    onattribend() {
      if (!inHref) return;
      inHref = false;
      const href = value.includes('&') ? decodeHTMLAttribute(value) : value;
      if (tag === Tag.Base) base = href;
      else hrefs.push(href);
    },
    onopentagend() {
      tag = Tag.Other;
    },
    onselfclosingtag() {
      tag = Tag.Other;
    },
    oncdata: NO_OP,
    onclosetag: NO_OP,
    oncomment: NO_OP,
    ondeclaration: NO_OP,
    onend: NO_OP,
    onprocessinginstruction: NO_OP,
    ontext: NO_OP,
    ontextentity: NO_OP,
  };
  const tokenizer = new Tokenizer({ decodeEntities: false }, callbacks);
  tokenizer.write(text);
  tokenizer.end();
  return { hrefs, base };
}

/**
 * Extracts the links of an HTML page: finds its encoding (sniffCharset), reads the hrefs of
 * `a` and `area`, resolves them against `<base href>` (itself resolved against the page URL)
 * or the page URL, and normalizes them (src/url/normalize.ts). Non-http(s) and malformed
 * hrefs are skipped; links longer than the limit are dropped and counted.
 */
export function extractLinks(
  body: Uint8Array,
  pageUrl: string,
  contentType: string | null,
  truncated: boolean,
  options: NormalizeOptions,
): ExtractedLinks {
  const charset = sniffCharset(body, contentType, truncated);
  const { hrefs, base } = collectHrefs(body, charset);
  let baseUrl: URL;
  try {
    baseUrl = new URL(base === undefined || base.trim() === '' ? pageUrl : base, pageUrl);
  } catch {
    baseUrl = new URL(pageUrl);
  }
  // HTML "set the frozen base URL": a data: or javascript: base falls back to the page URL.
  if (baseUrl.protocol === 'data:' || baseUrl.protocol === 'javascript:') baseUrl = new URL(pageUrl);
  const fastBase = fastBaseOf(baseUrl);
  const seen = new Set<string>();
  const links: string[] = [];
  let tooLong = 0;
  let skipped = 0;
  for (const href of hrefs) {
    const trimmed = href.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const r = normalizeLink(trimmed, baseUrl, fastBase, options);
    if (!r.ok) {
      if (r.reason === 'too-long') tooLong++;
      else skipped++;
      continue;
    }
    if (!seen.has(r.url)) {
      seen.add(r.url);
      links.push(r.url);
    }
  }
  return { links, charset, tooLong, skipped };
}
