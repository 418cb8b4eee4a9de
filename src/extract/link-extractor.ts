import { decodeHTMLAttribute } from 'entities';
import { fastBaseOf } from '../url/fast-resolve.js';
import { normalizeLink, type NormalizeOptions } from '../url/normalize.js';
import { decodeBytes, isAsciiCompatible, sniffCharset } from './charset.js';
import { NO_DIRECTIVES, parseRobotsContent, type RobotsDirectives } from './meta-robots.js';
import { nameIs, scanTags } from './tag-scanner.js';

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

/** A link found in the markup, before it is resolved. */
export interface RawLink {
  readonly href: string;
  readonly nofollow: boolean;
}

/** What the markup of a page says, before anything is resolved. */
export interface CollectedHrefs {
  /** The hrefs of `a` and `area` and the src of `iframe` and `frame`, in document order. */
  readonly hrefs: RawLink[];
  /** The href of the first `<base>` that has one. */
  readonly base: string | undefined;
  readonly robots: RobotsDirectives;
}

/** The tag kind of the name `text.slice(start, end)`. */
function tagOf(text: string, start: number, end: number): Tag {
  switch (end - start) {
    case 1:
      return (text.charCodeAt(start) | 0x20) === 0x61 ? Tag.Link : Tag.Other; // a
    case 4:
      if (nameIs(text, start, end, 'area')) return Tag.Link;
      if (nameIs(text, start, end, 'base')) return Tag.Base;
      if (nameIs(text, start, end, 'meta')) return Tag.Meta;
      return Tag.Other;
    case 5:
      return nameIs(text, start, end, 'frame') ? Tag.Frame : Tag.Other;
    case 6:
      return nameIs(text, start, end, 'iframe') ? Tag.Frame : Tag.Other;
    default:
      return Tag.Other;
  }
}

/**
 * Collects the hrefs of `<a>` and `<area>`, the src of `<iframe>` and `<frame>`, the first
 * `<base>`, and the robots `<meta>` of an HTML document with the tag scanner
 * (src/extract/tag-scanner.ts: htmlparser2's tokenizer rules, only start tags reported, no DOM
 * built). In an ASCII-compatible encoding the markup is read bytewise and only attribute
 * values with non-ASCII bytes are decoded; other encodings (UTF-16, ISO-2022-*) are decoded
 * whole first. A repeated attribute is ignored, as browsers do: the first wins.
 *
 * Character references are decoded only in the few values that hold a `&`, with the rules of
 * an attribute value (entities' decodeHTMLAttribute, the decoder htmlparser2 itself uses).
 */
export function collectHrefs(body: Uint8Array, charset: string): CollectedHrefs {
  const bytewise = isAsciiCompatible(charset);
  const text = bytewise ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1') : decodeBytes(body, charset);
  const hrefs: RawLink[] = [];
  let base: string | undefined;
  let robots = NO_DIRECTIVES;
  let tag = Tag.Other;
  let attrs: Record<string, string> = {};

  scanTags(text, {
    openTag(start, end) {
      tag = tagOf(text, start, end);
      if (tag === Tag.Base && base !== undefined) tag = Tag.Other;
      if (tag === Tag.Other) return false;
      attrs = {};
      return true;
    },
    attribute(nameStart, nameEnd, valueStart, valueEnd) {
      let name: string | undefined;
      for (const wanted of WANTED[tag]) {
        if (nameIs(text, nameStart, nameEnd, wanted)) name = wanted;
      }
      if (name === undefined || attrs[name] !== undefined) return;
      let value = text.slice(valueStart, valueEnd);
      if (bytewise && /[\x80-\xff]/.test(value)) value = decodeBytes(Buffer.from(value, 'latin1'), charset);
      attrs[name] = value.includes('&') ? decodeHTMLAttribute(value) : value;
    },
    tagEnd() {
      if (tag === Tag.Link && attrs.href !== undefined)
        hrefs.push({ href: attrs.href, nofollow: /(^|\s)nofollow(\s|$)/i.test(attrs.rel ?? '') });
      else if (tag === Tag.Frame && attrs.src !== undefined) hrefs.push({ href: attrs.src, nofollow: false });
      else if (tag === Tag.Base && attrs.href !== undefined) base ??= attrs.href;
      else if (tag === Tag.Meta && attrs.name?.trim().toLowerCase() === 'robots' && attrs.content !== undefined) {
        const d = parseRobotsContent(attrs.content);
        robots = { nofollow: robots.nofollow || d.nofollow, noindex: robots.noindex || d.noindex };
      }
    },
  });
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
