import { Parser } from 'htmlparser2';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';

/** One entry of a sitemap: a page (`urlset`) or another sitemap (`sitemapindex`). */
export interface SitemapEntry {
  readonly kind: 'page' | 'sitemap';
  readonly loc: string;
  /** `<lastmod>` as epoch ms, when present and valid. */
  readonly lastmodMs?: number;
}

export interface SitemapResult {
  readonly entries: SitemapEntry[];
  /** Entries beyond `maxEntries` that were not kept. */
  readonly dropped: number;
  /** Why the sitemap could not be read (malformed, not a sitemap); entries found before stay. */
  readonly error?: string;
  /** What it was: a sitemap (`urlset`, `sitemapindex`), a feed (`rss`, `rdf`, `feed` for Atom), or `text`. */
  readonly format?: 'urlset' | 'sitemapindex' | 'rss' | 'rdf' | 'feed' | 'text';
}

/** Root elements of the feeds read as lists of pages (RSS 2.0, RSS 1.0, Atom): each item or entry is a page. */
const FEED_ROOTS = new Set(['rss', 'rdf', 'feed']);
const KNOWN_ROOTS = new Set(['urlset', 'sitemapindex', ...FEED_ROOTS]);

/** The sitemap protocol's own limits: 50,000 URLs and 50 MB (uncompressed) per file. */
export const SITEMAP_MAX_ENTRIES = 50_000;
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024;

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * Reads a sitemap as it streams in (sitemaps.org): XML `urlset` or `sitemapindex`, a
 * plain-text list of URLs, or a feed (RSS 2.0 `<item><link>` with `<pubDate>`, RSS 1.0,
 * Atom `<entry><link href>` with `<updated>`), gzipped or not (told by its first bytes). Memory stays bounded:
 * the body is never held whole, at most `maxEntries` entries are kept and at most
 * `maxBytes` decoded bytes are read. Never throws for bad input: `error` says what was wrong.
 */
export async function parseSitemap(body: Readable, options: { maxEntries?: number; maxBytes?: number } = {}): Promise<SitemapResult> {
  const maxEntries = options.maxEntries ?? SITEMAP_MAX_ENTRIES;
  const maxBytes = options.maxBytes ?? SITEMAP_MAX_BYTES;
  const entries: SitemapEntry[] = [];
  let dropped = 0;
  let error: string | undefined;
  const add = (e: SitemapEntry): void => {
    if (entries.length < maxEntries) entries.push(e);
    else dropped++;
  };

  let mode: 'xml' | 'text' | undefined;
  let root: string | undefined;
  let inEntry: 'page' | 'sitemap' | undefined;
  let field: 'loc' | 'lastmod' | undefined;
  let loc = '';
  let lastmod = '';
  let textRest = '';
  const xml = new Parser(
    {
      onopentag(name, attrs) {
        const n = name.toLowerCase().replace(/^.*:/, '');
        root ??= n;
        const feed = FEED_ROOTS.has(root);
        const starts =
          (n === 'url' && root === 'urlset') || (n === 'sitemap' && root === 'sitemapindex') || (feed && (n === 'item' || n === 'entry'));
        if (starts) {
          inEntry = n === 'sitemap' ? 'sitemap' : 'page';
          loc = lastmod = '';
        } else if (inEntry !== undefined && !feed && (n === 'loc' || n === 'lastmod')) field = n;
        else if (inEntry !== undefined && feed && n === 'link') {
          // Atom: <link href> (the alternate one, or one without rel); RSS: <link>text</link>.
          if (root !== 'feed') field = 'loc';
          else if (loc === '' && attrs.href !== undefined && (attrs.rel === undefined || attrs.rel === 'alternate')) loc = attrs.href;
        } else if (inEntry !== undefined && feed && (n === 'pubdate' || n === 'updated' || n === 'date')) field = 'lastmod';
      },
      ontext(text) {
        if (field === 'loc') loc += text;
        else if (field === 'lastmod') lastmod += text;
      },
      onclosetag(name) {
        const n = name.toLowerCase().replace(/^.*:/, '');
        if (n === 'loc' || n === 'lastmod' || n === 'link' || n === 'pubdate' || n === 'updated' || n === 'date') field = undefined;
        else if ((n === 'url' || n === 'sitemap' || n === 'item' || n === 'entry') && inEntry !== undefined) {
          const ms = Date.parse(lastmod.trim());
          if (loc.trim() !== '')
            add({ kind: inEntry, loc: ownCopy(decodeEntities(loc.trim())), ...(Number.isFinite(ms) ? { lastmodMs: ms } : {}) });
          inEntry = undefined;
        }
      },
    },
    { xmlMode: true, decodeEntities: false },
  );
  const textLine = (line: string): void => {
    const t = line.trim();
    if (/^https?:\/\/\S+$/i.test(t)) add({ kind: 'page', loc: ownCopy(t) });
  };

  let bytes = 0;
  const utf8 = new StringDecoder('utf8'); // a character split across chunks stays whole
  try {
    for await (const chunk of chunks(body)) {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        error = `larger than ${maxBytes} bytes: read no further`;
        break;
      }
      const text = utf8.write(chunk);
      if (mode === undefined) {
        const start = text.trimStart();
        if (start === '') continue;
        mode = start.startsWith('<') ? 'xml' : 'text';
      }
      if (mode === 'xml') xml.write(text);
      else {
        const lines = (textRest + text).split(/\r?\n/);
        textRest = lines.pop()!;
        lines.forEach(textLine);
      }
      if (dropped > 0 && entries.length >= maxEntries) break;
    }
  } catch (err) {
    error = `unreadable: ${(err as Error).message}`;
  }
  if (mode === 'xml') xml.end();
  else if (mode === 'text') textLine(textRest);
  if (error === undefined && mode === 'xml' && (root === undefined || !KNOWN_ROOTS.has(root))) {
    error = `not a sitemap (root element ${root === undefined ? 'missing' : `<${root}>`})`;
  }
  if (error === undefined && mode === undefined) error = 'empty sitemap';
  const format = mode === 'text' ? 'text' : root !== undefined && KNOWN_ROOTS.has(root) ? (root as SitemapResult['format']) : undefined;
  return { entries, dropped, ...(error !== undefined ? { error } : {}), ...(format !== undefined ? { format } : {}) };
}

/** The chunks of a body, gunzipped when it starts with the gzip magic bytes. */
async function* chunks(body: Readable): AsyncGenerator<Buffer> {
  const it = body[Symbol.asyncIterator]();
  const head = await it.next();
  if (head.done === true) return;
  const firstChunk = Buffer.from(head.value as Uint8Array);
  const gzip = firstChunk[0] === GZIP_MAGIC[0] && firstChunk[1] === GZIP_MAGIC[1];
  if (!gzip) {
    yield firstChunk;
    for (let r = await it.next(); r.done !== true; r = await it.next()) yield Buffer.from(r.value as Uint8Array);
    return;
  }
  const gunzip = createGunzip();
  const feed = (async () => {
    try {
      gunzip.write(firstChunk);
      for (let r = await it.next(); r.done !== true; r = await it.next()) {
        if (!gunzip.write(Buffer.from(r.value as Uint8Array))) await new Promise((res) => gunzip.once('drain', res));
      }
      gunzip.end();
    } catch (err) {
      gunzip.destroy(err as Error);
    }
  })();
  try {
    for await (const c of gunzip) yield c as Buffer;
  } finally {
    gunzip.destroy();
    await feed.catch(() => undefined);
  }
}

/**
 * A copy of `s` that holds nothing else. A URL cut out of a chunk of the body is, in V8, a
 * slice of that chunk's text, and keeping it would keep the whole chunk (64 KiB for a URL of
 * 40 characters: a 50 MB sitemap was held whole, docs/benchmarks-log.md, "A sitemap of 50 MB").
 * Joining it to another string makes a new flat string, and the slice refers to that.
 */
function ownCopy(s: string): string {
  return ` ${s}`.slice(1);
}

function decodeEntities(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[e]!);
}
