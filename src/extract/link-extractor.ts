import { decodeHTMLAttribute } from 'entities';
import { Tokenizer } from 'htmlparser2';
import type { TokenizerCallbacks } from 'htmlparser2';
import { fastBaseOf } from '../url/fast-resolve.js';
import { normalizeLink, type NormalizeOptions } from '../url/normalize.js';
import { decodeBytes, isAsciiCompatible, sniffCharset } from './charset.js';
import { NO_DIRECTIVES, parseRobotsContent, type RobotsDirectives } from './meta-robots.js';

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
  /** What `<meta name="robots">` says (nofollow: `links` is then empty). */
  readonly robots: RobotsDirectives;
  /** Links left out because they carry rel="nofollow" and `obeyRelNofollow` was asked. */
  readonly relNofollow: number;
}

/** How links are chosen beyond normalization. */
export interface ExtractOptions {
  /** Leave out `<a rel="nofollow">` links (default: follow them, as the page's own links). */
  readonly obeyRelNofollow?: boolean;
}

/** Tags whose attributes we read. */
const enum Tag {
  Other = 0,
  /** `a`, `area`: href and rel. */
  Link = 1,
  /** The first `base`: href. */
  Base = 2,
  /** `iframe`, `frame`: src, followed like a link (as wget, Heritrix and Nutch do). */
  Frame = 3,
  /** `meta`: name and content (robots directives). */
  Meta = 4,
}

/** The attributes read of each tag. */
const WANTED: Record<Tag, readonly string[]> = {
  [Tag.Other]: [],
  [Tag.Link]: ['href', 'rel'],
  [Tag.Base]: ['href'],
  [Tag.Frame]: ['src'],
  [Tag.Meta]: ['name', 'content'],
};

const NO_OP = (): void => undefined;

/** A link found in the markup, before it is resolved. */
interface RawLink {
  readonly href: string;
  readonly nofollow: boolean;
}

/**
 * Collects the hrefs of `<a>` and `<area>`, the src of `<iframe>` and `<frame>`, the first
 * `<base>`, and the robots `<meta>` of an HTML document with htmlparser2's tokenizer: no DOM
 * is built (4 to 8 times cheaper per page than cheerio's load; see docs/benchmarks.md). In an
 * ASCII-compatible encoding the markup is read bytewise and only attribute values with
 * non-ASCII bytes are decoded; other encodings (UTF-16, ISO-2022-*) are decoded whole first.
 * A repeated attribute is ignored, as browsers do: the first wins.
 *
 * The tokenizer does not decode character references: it then skips text and attribute
 * values to the next `<` or quote with a plain scan (about a quarter less time per page,
 * docs/benchmarks.md), and only the few values that hold a `&` are decoded, with the rules of
 * an attribute value (entities' decodeHTMLAttribute, the decoder htmlparser2 itself uses).
 */
function collectHrefs(body: Uint8Array, charset: string): { hrefs: RawLink[]; base: string | undefined; robots: RobotsDirectives } {
  const bytewise = isAsciiCompatible(charset);
  const text = bytewise ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1') : decodeBytes(body, charset);
  const hrefs: RawLink[] = [];
  let base: string | undefined;
  let robots = NO_DIRECTIVES;
  let tag = Tag.Other;
  let attrs: Record<string, string> = {};
  let current: string | undefined;
  let value = '';

  const finishTag = (): void => {
    if (tag === Tag.Link && attrs.href !== undefined) hrefs.push({ href: attrs.href, nofollow: /(^|\s)nofollow(\s|$)/i.test(attrs.rel ?? '') });
    else if (tag === Tag.Frame && attrs.src !== undefined) hrefs.push({ href: attrs.src, nofollow: false });
    else if (tag === Tag.Base && attrs.href !== undefined) base ??= attrs.href;
    else if (tag === Tag.Meta && attrs.name?.trim().toLowerCase() === 'robots' && attrs.content !== undefined) {
      const d = parseRobotsContent(attrs.content);
      robots = { nofollow: robots.nofollow || d.nofollow, noindex: robots.noindex || d.noindex };
    }
    tag = Tag.Other;
  };

  const callbacks: TokenizerCallbacks = {
    onopentagname(start, end) {
      const len = end - start;
      tag = Tag.Other;
      current = undefined;
      if (len === 1) {
        if ((text.charCodeAt(start) | 0x20) === 0x61) tag = Tag.Link; // a
      } else if (len >= 4 && len <= 6) {
        const name = text.slice(start, end).toLowerCase();
        if (name === 'area') tag = Tag.Link;
        else if (name === 'base' && base === undefined) tag = Tag.Base;
        else if (name === 'iframe' || name === 'frame') tag = Tag.Frame;
        else if (name === 'meta') tag = Tag.Meta;
      }
      if (tag !== Tag.Other) attrs = {};
    },
    onattribname(start, end) {
      current = undefined;
      if (tag === Tag.Other || end - start > 7) return;
      const name = text.slice(start, end).toLowerCase();
      if (WANTED[tag].includes(name) && attrs[name] === undefined) current = name;
      value = '';
    },
    onattribdata(start, end) {
      if (current === undefined) return;
      const raw = text.slice(start, end);
      value += bytewise && /[\x80-\xff]/.test(raw) ? decodeBytes(Buffer.from(raw, 'latin1'), charset) : raw;
    },
    onattribentity: NO_OP, // not called: entities are not decoded by the tokenizer
    onattribend() {
      if (current === undefined) return;
      attrs[current] = value.includes('&') ? decodeHTMLAttribute(value) : value;
      current = undefined;
    },
    onopentagend: finishTag,
    onselfclosingtag: finishTag,
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
  return { hrefs, base, robots };
}

/**
 * Extracts the links of an HTML page: finds its encoding (sniffCharset), reads the hrefs of
 * `a` and `area` and the src of `iframe` and `frame`, resolves them against `<base href>` (itself resolved against the page URL)
 * or the page URL, and normalizes them (src/url/normalize.ts). Non-http(s) and malformed
 * hrefs are skipped; links longer than the limit are dropped and counted.
 */
export function extractLinks(
  body: Uint8Array,
  pageUrl: string,
  contentType: string | null,
  truncated: boolean,
  options: NormalizeOptions,
  extract: ExtractOptions = {},
): ExtractedLinks {
  const charset = sniffCharset(body, contentType, truncated);
  const { hrefs, base, robots } = collectHrefs(body, charset);
  // <meta name="robots" content="nofollow">: none of the page's links is followed.
  if (robots.nofollow) return { links: [], charset, tooLong: 0, skipped: 0, robots, relNofollow: 0 };
  let baseUrl: URL;
  try {
    baseUrl = new URL(base === undefined || base.trim() === '' ? pageUrl : base, pageUrl);
  } catch {
    baseUrl = new URL(pageUrl);
  }
  // HTML "set the frozen base URL": a data: or javascript: base falls back to the page URL.
  if (baseUrl.protocol === 'data:' || baseUrl.protocol === 'javascript:') baseUrl = new URL(pageUrl);
  const seen = new Set<string>();
  const links: string[] = [];
  let tooLong = 0;
  let skipped = 0;
  const fastBase = fastBaseOf(baseUrl);
  let relNofollow = 0;
  for (const { href, nofollow } of hrefs) {
    if (nofollow && extract.obeyRelNofollow === true) {
      relNofollow++;
      continue;
    }
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
  return { links, charset, tooLong, skipped, robots, relNofollow };
}
