import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeHTMLAttribute } from 'entities';
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { PAGE_SHAPES, generatePage, type SiteShape } from '../../../bench/pages.js';
import { decodeBytes, isAsciiCompatible } from '../../../src/extract/charset.js';
import { collectHrefs, type CollectedHrefs, type RawLink } from '../../../src/extract/link-extractor.js';
import { NO_DIRECTIVES, parseRobotsContent } from '../../../src/extract/meta-robots.js';
import { scanTags } from '../../../src/extract/tag-scanner.js';
import { rng } from '../../../src/site/generated-site.js';

// The tag scanner must report what htmlparser2's tokenizer reports (src/extract/tag-scanner.ts):
// every test here compares the two, event for event, on constructs and on random documents.

const nothing = (): void => undefined;
/** The tokenizer's callbacks that no start tag comes through. */
const IGNORED = {
  onattribentity: nothing,
  oncdata: nothing,
  onclosetag: nothing,
  oncomment: nothing,
  ondeclaration: nothing,
  onend: nothing,
  onprocessinginstruction: nothing,
  ontext: nothing,
  ontextentity: nothing,
};

/** The start tags of a document as htmlparser2's tokenizer reports them: `<name`, `name=value`, `>`. */
function tokenizerEvents(text: string): string[] {
  const events: string[] = [];
  let name = '';
  let value = '';
  const callbacks: TokenizerCallbacks = {
    onopentagname: (start, end) => events.push(`<${text.slice(start, end)}`),
    onattribname(start, end) {
      name = text.slice(start, end);
      value = '';
    },
    onattribdata(start, end) {
      value += text.slice(start, end);
    },
    onattribend: () => events.push(`${name}=${value}`),
    onopentagend: () => events.push('>'),
    onselfclosingtag: () => events.push('>'),
    ...IGNORED,
  };
  const tokenizer = new Tokenizer({ decodeEntities: false }, callbacks);
  tokenizer.write(text);
  tokenizer.end();
  return events;
}

/** The same events from the scanner, every tag wanted. */
function scannerEvents(text: string): string[] {
  const events: string[] = [];
  scanTags(text, {
    openTag(start, end) {
      events.push(`<${text.slice(start, end)}`);
      return true;
    },
    attribute: (ns, ne, vs, ve) => events.push(`${text.slice(ns, ne)}=${text.slice(vs, ve)}`),
    tagEnd: () => events.push('>'),
  });
  return events;
}

/** What the link extractor collected before the scanner: the same rules on htmlparser2's tokenizer. */
function tokenizerHrefs(body: Uint8Array, charset: string): CollectedHrefs {
  const bytewise = isAsciiCompatible(charset);
  const text = bytewise ? Buffer.from(body).toString('latin1') : decodeBytes(body, charset);
  const wanted: Record<string, readonly string[]> = {
    a: ['href', 'rel'],
    area: ['href', 'rel'],
    base: ['href'],
    iframe: ['src'],
    frame: ['src'],
    meta: ['name', 'content'],
  };
  const hrefs: RawLink[] = [];
  let base: string | undefined;
  let robots = NO_DIRECTIVES;
  let tag: string | undefined;
  let attrs: Record<string, string> = {};
  let current: string | undefined;
  let value = '';
  const finish = (): void => {
    if ((tag === 'a' || tag === 'area') && attrs.href !== undefined)
      hrefs.push({ href: attrs.href, nofollow: /(^|\s)nofollow(\s|$)/i.test(attrs.rel ?? '') });
    else if ((tag === 'iframe' || tag === 'frame') && attrs.src !== undefined) hrefs.push({ href: attrs.src, nofollow: false });
    else if (tag === 'base' && attrs.href !== undefined) base ??= attrs.href;
    else if (tag === 'meta' && attrs.name?.trim().toLowerCase() === 'robots' && attrs.content !== undefined) {
      const d = parseRobotsContent(attrs.content);
      robots = { nofollow: robots.nofollow || d.nofollow, noindex: robots.noindex || d.noindex };
    }
    tag = undefined;
  };
  const tokenizer = new Tokenizer(
    { decodeEntities: false },
    {
      onopentagname(start, end) {
        const name = text.slice(start, end).toLowerCase();
        tag = Object.hasOwn(wanted, name) && !(name === 'base' && base !== undefined) ? name : undefined;
        current = undefined;
        attrs = {};
      },
      onattribname(start, end) {
        const name = text.slice(start, end).toLowerCase();
        current = tag !== undefined && wanted[tag]!.includes(name) && attrs[name] === undefined ? name : undefined;
        value = '';
      },
      onattribdata(start, end) {
        if (current === undefined) return;
        const raw = text.slice(start, end);
        value += bytewise && /[\x80-\xff]/.test(raw) ? decodeBytes(Buffer.from(raw, 'latin1'), charset) : raw;
      },
      onattribend() {
        if (current !== undefined) attrs[current] = value.includes('&') ? decodeHTMLAttribute(value) : value;
        current = undefined;
      },
      onopentagend: finish,
      onselfclosingtag: finish,
      ...IGNORED,
    },
  );
  tokenizer.write(text);
  tokenizer.end();
  return { hrefs, base, robots };
}

function same(text: string, what = JSON.stringify(text)): void {
  assert.deepEqual(scannerEvents(text), tokenizerEvents(text), what);
}

function sameHrefs(body: Uint8Array, charset: string, what: string): void {
  assert.deepEqual(collectHrefs(body, charset), tokenizerHrefs(body, charset), what);
}

/** Constructs and fragments of constructs, glued together in the tests below. */
const PIECES = [
  '<a href="/x">',
  "<a href='/y'>",
  '<a href=/z>',
  '<a href=/z/>',
  '<a href>',
  '<a href=>',
  '<a href = "/sp" >',
  '<A HREF="/U">',
  '<a\thref="/t"\n>',
  '<a href="/1" href="/2">',
  '<a =x>',
  '<a "q"=1>',
  '<a x"y=z>',
  '<a x y>',
  '<a/>',
  '<a / >',
  '<a /x>',
  '<a//href=/q>',
  '<a href="/amp?a=1&amp;b=2">',
  '<a rel="nofollow" href="/nf">',
  '<area href="/ar">',
  '<base href="/b/">',
  '<BASE href="/B/">',
  '<iframe src="/if">',
  '<frame src="/f">',
  '<meta name="robots" content="nofollow">',
  '<meta name=ROBOTS content="noindex">',
  '<img src="/i.png">',
  '<abbr href="/ab">',
  '<areas href="/as">',
  '<a',
  '<a href="unclosed',
  "<a href='",
  '<a href=',
  '<a href',
  '<',
  '<<a href="/dbl">',
  '< a href="/sp">',
  '<1a href="/num">',
  '<!-- <a href="/c1"> -->',
  '<!---->',
  '<!-->',
  '<!--->',
  '<!-- unclosed',
  '<!- <a href="/d1"> ->',
  '<!->',
  '<!>',
  '<!DOCTYPE html>',
  '<![CDATA[ <a href="/cd"> ]]>',
  '<![CDATA[ ]]]>',
  '<![CDAT <a>',
  '<![cdata[ > <a href="/lc2"> ]]>',
  '<a\x0bhref=/vt>',
  '\x0b',
  '<![cdata[ <a href="/lc"> ]]>',
  '<?xml version="1.0"?>',
  '<? <a href="/pi"> ?>',
  '</a>',
  '</ a href="/end">',
  '</>',
  '</ >',
  '</1 <a>',
  '</a href="/ca">',
  '<script>',
  '</script>',
  '</SCRIPT >',
  '</script',
  '<script type="x">var s = "<a href=/js>";</script>',
  '<script/>',
  '<script />',
  '<script /x>',
  '<scripts>',
  '<scrip>',
  '<style>a{}</style>',
  '<StYlE>',
  '</style>',
  '<title>',
  '</title>',
  '<title>&amp;<a href="/ti"></title>',
  '<xitle>',
  '<textarea>',
  '</textarea>',
  '<xextarea>',
  '<xmp>',
  '</xmp>',
  '<tmp>',
  '<t>',
  '<x>',
  '<s>',
  '\x1c/script>',
  '\x1c\x0fscript>',
  '<\x0fscript>',
  '</scrip',
  '<</script>',
  '</script\t',
  '</script/>',
  'text',
  ' ',
  '\n',
  '>',
  '"',
  "'",
  '=',
  '/',
  '&',
  '&amp;',
  '\u00e9',
  '\u{1F600}',
  'a',
  'href',
];

describe('tag scanner: the same start tags as htmlparser2 tokenizer', () => {
  test('every piece alone and every pair of pieces', () => {
    for (const a of PIECES) {
      same(a);
      for (const b of PIECES) same(a + b);
    }
  });

  /** 40,000 documents of up to `most` parts drawn from `parts` with the seed given. */
  const randomDocuments = (seed: number, parts: readonly string[], most: number): void => {
    const r = rng(seed);
    for (let n = 0; n < 40_000; n++) {
      let text = '';
      const k = 1 + Math.floor(r() * most);
      for (let j = 0; j < k; j++) text += parts[Math.floor(r() * parts.length)];
      same(text);
    }
  };

  test('40,000 documents of random pieces', () => randomDocuments(9, PIECES, 8));

  test('40,000 documents of random characters from the ones that matter', () =>
    randomDocuments(13, [...'<>/!-[]?="\' \t\x0ba=hrefscripttlexmp\x1c\x0fCDAT'], 40));

  test('every page shape of the bench site', () => {
    const hosts = [0, 1].map((i) => ({ index: i, origin: `http://127.0.0.${10 + i}:4000`, authority: `127.0.0.${10 + i}:4000` }));
    for (const pages of PAGE_SHAPES) {
      const site: SiteShape = { hosts, pagesPerHost: 40, external: ['http://127.0.0.200:4001'], pages };
      for (let i = 0; i < 20; i++) {
        const body = generatePage(site, 1, i).body;
        same(body.toString('latin1'), `${pages} page ${i}`);
        sameHrefs(body, 'UTF-8', `${pages} page ${i}`);
      }
    }
  });
});

describe('tag scanner: the quirks it keeps, said outright', () => {
  test('a sink hears the attributes and end only of the tags it wants', () => {
    const text = '<b class=x><a href=/1><i/><a href=/2 />';
    const events: string[] = [];
    scanTags(text, {
      openTag(start, end) {
        events.push(`<${text.slice(start, end)}`);
        return text.slice(start, end) === 'a';
      },
      attribute: (ns, ne, vs, ve) => events.push(`${text.slice(ns, ne)}=${text.slice(vs, ve)}`),
      tagEnd: () => events.push('>'),
    });
    assert.deepEqual(events, ['<b', '<a', 'href=/1', '>', '<i', '<a', 'href=/2', '>']);
  });

  const hrefsOf = (html: string): string[] => collectHrefs(Buffer.from(html), 'UTF-8').hrefs.map((h) => h.href);

  test('raw text hides links; a self-closed script does not', () => {
    assert.deepEqual(hrefsOf('<script><a href="/in"></script><a href="/out">'), ['/out']);
    assert.deepEqual(hrefsOf('<script/><a href="/after">'), ['/after']);
    assert.deepEqual(hrefsOf('<tmp><a href="/in"></xmp><a href="/out">'), ['/out']);
    assert.deepEqual(hrefsOf('<title><a href="/in">\x1c\x0ftitle><a href="/out">'), ['/out']);
  });

  test('comments, declarations and a tag cut off at the end', () => {
    assert.deepEqual(hrefsOf('<!--><a href="/1"><!> <a href="/no">> <a href="/2">'), ['/1', '/2']);
    assert.deepEqual(hrefsOf('<a href="/whole"><a href="/cut"'), ['/whole']);
  });

  test('the first value of a repeated attribute; character references decoded', () => {
    assert.deepEqual(hrefsOf('<a href="/a?x=1&amp;y=2" href="/second">'), ['/a?x=1&y=2']);
  });
});

describe('collectHrefs: the same links as on htmlparser2 tokenizer', () => {
  test('pairs of pieces, read as UTF-8 and as windows-1252', () => {
    for (const a of PIECES) {
      for (const b of PIECES) {
        sameHrefs(Buffer.from(a + b, 'utf8'), 'UTF-8', JSON.stringify(a + b));
        sameHrefs(Buffer.from(a + b, 'latin1'), 'windows-1252', JSON.stringify(a + b));
      }
    }
  });

  test('UTF-16 pages are decoded whole first', () => {
    const html = '<base href="/b/"><a href="/\u00e9t\u00e9">x</a><iframe src="/\u65e5"></iframe><meta name="robots" content="noindex">';
    sameHrefs(Buffer.from(html, 'utf16le'), 'UTF-16LE', 'UTF-16LE');
    assert.deepEqual(collectHrefs(Buffer.from(html, 'utf16le'), 'UTF-16LE'), {
      hrefs: [
        { href: '/\u00e9t\u00e9', nofollow: false },
        { href: '/\u65e5', nofollow: false },
      ],
      base: '/b/',
      robots: { nofollow: false, noindex: true },
    });
  });
});
