import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { extractLinks, type ExtractedLinks } from '../../../src/extract/link-extractor.js';
import { DEFAULT_NORMALIZE_OPTIONS, type NormalizeOptions } from '../../../src/url/normalize.js';

const PAGE = 'http://example.com/dir/page.html';
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1');

/** `日本` in Shift_JIS; its UTF-8 percent-encoding is %E6%97%A5%E6%9C%AC. */
const SJIS_NIHON = Buffer.from([0x93, 0xfa, 0x96, 0x7b]);

function extract(
  body: Uint8Array,
  contentType: string | null = 'text/html',
  options: NormalizeOptions = DEFAULT_NORMALIZE_OPTIONS,
  truncated = false,
): ExtractedLinks {
  return extractLinks(body, PAGE, contentType, truncated, options);
}

function links(html: string): string[] {
  return extract(utf8(html)).links;
}

describe('extractLinks: which hrefs', () => {
  test('a[href] and area[href], resolved against the page and normalized', () => {
    const r = extract(utf8('<a href="a.html">x</a><map><area href="/b" shape=rect></map>'));
    assert.deepEqual(r, {
      links: ['http://example.com/dir/a.html', 'http://example.com/b'],
      charset: 'UTF-8',
      tooLong: 0,
      robots: { nofollow: false, noindex: false },
      relNofollow: 0,
      skipped: 0,
    });
  });

  test('other tags and attributes are not links', () => {
    const html =
      '<link href="/css"><img src="/i.png"><script src="/s.js"></script><a name="top">' +
      '<abbr href="/ab"><b href="/bb"><areas href="/z"><a data-href="/dh"><a xlink:href="/xl">';
    assert.deepEqual(links(html), []);
  });

  test('uppercase and mixed-case tags and attributes', () => {
    assert.deepEqual(links('<A HREF="/U1">x</A><AREA HrEf="/u2"><BASE HREF="/b/">'), ['http://example.com/U1', 'http://example.com/u2']);
  });

  test('unquoted and single-quoted attribute values', () => {
    assert.deepEqual(links("<a href=/unq?a=1&amp;b=2 class=x>x</a><a href='/sq'>y</a>"), [
      'http://example.com/unq?a=1&b=2',
      'http://example.com/sq',
    ]);
  });

  test('surrounding white space in an href is ignored', () => {
    assert.deepEqual(links('<a href="\n  /nl\t">x</a>'), ['http://example.com/nl']);
  });

  test('a repeated href attribute: the first one counts, as in browsers', () => {
    assert.deepEqual(links('<a href="/first" href="/second">x</a>'), ['http://example.com/first']);
  });

  test('links inside <svg> and <noscript> count', () => {
    assert.deepEqual(links('<svg><a href="/svg"></a></svg><noscript><a href="/ns"></a></noscript>'), [
      'http://example.com/svg',
      'http://example.com/ns',
    ]);
  });
});

describe('extractLinks: what is not markup', () => {
  test('hrefs inside <script>, <style>, comments, <textarea> and <title> are not extracted', () => {
    const html =
      '<title><a href="/ti"></title>' +
      '<script>var s = \'<a href="/s1">\';</script>' +
      '<style>/* <a href="/st"> */</style>' +
      '<!-- <a href="/c1"> -->' +
      '<textarea><a href="/ta"></textarea>' +
      '<a href="/real">real</a>';
    assert.deepEqual(links(html), ['http://example.com/real']);
  });

  test('malformed HTML does not stop extraction', () => {
    const html = '<p><div><a href="/m1"<a href="/m2">x<div <a href=/m3></a></p></span><a href="/m4">ok</a><a href="/cut';
    // `<a href="/m1"<a href="/m2">`: `<a` is a second attribute name and the repeated href is
    // ignored; `<div <a href=/m3>` is a div; an unterminated tag at the end is dropped.
    assert.deepEqual(links(html), ['http://example.com/m1', 'http://example.com/m4']);
  });
});

describe('extractLinks: <base href>', () => {
  test('a relative base resolves against the page', () => {
    assert.deepEqual(links('<base href="../other/"><a href="x">x</a>'), ['http://example.com/other/x']);
  });

  test('an absolute base changes host and scheme', () => {
    assert.deepEqual(links('<base href="https://cdn.example.org/root/"><a href="x">x</a><a href="/y">y</a>'), [
      'https://cdn.example.org/root/x',
      'https://cdn.example.org/y',
    ]);
  });

  test('only the first base with an href counts, wherever the links are', () => {
    assert.deepEqual(links('<a href="x">x</a><base target=_top><base href="/one/"><base href="/two/">'), ['http://example.com/one/x']);
  });

  test('an empty base is the page itself', () => {
    assert.deepEqual(links('<base href=""><a href="y">y</a>'), ['http://example.com/dir/y']);
  });

  test('absolute links ignore the base', () => {
    assert.deepEqual(links('<base href="/b/"><a href="http://other.com/z">z</a>'), ['http://other.com/z']);
  });

  test('a javascript: or data: base is ignored, as browsers do (HTML: frozen base URL)', () => {
    assert.deepEqual(links('<base href="javascript:void(0)"><a href="y">y</a>'), ['http://example.com/dir/y']);
    assert.deepEqual(links('<base href=" DATA:text/html,x"><a href="/z">z</a>'), ['http://example.com/z']);
  });
});

describe('extractLinks: character references and encodings', () => {
  test('entities in hrefs are decoded before the URL is parsed', () => {
    assert.deepEqual(links('<a href="/s?a=1&amp;b=2&lt;">x</a><a href="/p&#47;q&#x2F;r">y</a>'), [
      'http://example.com/s?a=1&b=2%3C',
      'http://example.com/p/q/r',
    ]);
  });

  test('a legacy entity without ";" followed by "=" stays as text in an attribute (HTML spec)', () => {
    assert.deepEqual(links('<a href="/q?x=1&copy=2">x</a>'), ['http://example.com/q?x=1&copy=2']);
  });

  test('entities are decoded in the href only, after the scanner found where it ends', () => {
    // An encoded quote does not end the value; an encoded # starts the fragment (dropped).
    assert.deepEqual(links('<a href="/a&quot;b">x</a><a href="/c&#35;d">y</a><a href=\'/e&apos;f\'>z</a>'), [
      'http://example.com/a%22b',
      'http://example.com/c',
      "http://example.com/e'f",
    ]);
    // Entities in text are not tags; an unknown or unterminated reference stays as it is.
    assert.deepEqual(links('&lt;a href="/no"&gt; <a href="/x?a=&unknown;&amp">x</a> &amp <a href="/y&#">y</a>'), [
      'http://example.com/x?a=&unknown;&',
      'http://example.com/y&',
    ]);
  });

  test('entities in <base href>, and next to non-ASCII bytes of a legacy encoding', () => {
    assert.deepEqual(links('<base href="/b&#47;c/"><a href="x">x</a>'), ['http://example.com/b/c/x']);
    const body = Buffer.concat([latin1('<meta charset=Shift_JIS><a href="/'), SJIS_NIHON, latin1('&amp;'), SJIS_NIHON, latin1('&#x41;">')]);
    assert.deepEqual(extract(body, 'text/html').links, ['http://example.com/%E6%97%A5%E6%9C%AC&%E6%97%A5%E6%9C%ACA']);
  });

  test('entities inside scripts, styles, comments and titles never make links', () => {
    const html =
      '<title>&lt;a href="/t"&gt;</title><script>var s = "&lt;a href=\'/s\'&gt;<a href=/s2>";</script>' +
      '<style>a[href="&amp;"]{}</style><!-- <a href="/c&amp;"> --><a href="/ok&amp;1">ok</a>';
    assert.deepEqual(links(html), ['http://example.com/ok&1']);
  });

  test('Shift_JIS page declared only by <meta charset>: hrefs come out as UTF-8 escapes', () => {
    const body = Buffer.concat([latin1('<meta charset=Shift_JIS><a href="/'), SJIS_NIHON, latin1('.html?q='), SJIS_NIHON, latin1('">')]);
    const r = extract(body, 'text/html');
    assert.equal(r.charset, 'Shift_JIS');
    assert.deepEqual(r.links, ['http://example.com/%E6%97%A5%E6%9C%AC.html?q=%E6%97%A5%E6%9C%AC']);
  });

  test('Shift_JIS page whose header wrongly says UTF-8: the meta tag wins', () => {
    const body = Buffer.concat([latin1('<meta charset=Shift_JIS><a href="/'), SJIS_NIHON, latin1('">')]);
    const r = extract(body, 'text/html; charset=utf-8');
    assert.equal(r.charset, 'Shift_JIS');
    assert.deepEqual(r.links, ['http://example.com/%E6%97%A5%E6%9C%AC']);
  });

  test('windows-1252 bytes become the UTF-8 of their characters', () => {
    const r = extract(latin1('<a href="/caf\xe9">x</a><a href="/\x80">y</a><a href="/\x93q\x94">z</a>'), 'text/html');
    assert.equal(r.charset, 'windows-1252');
    // é is U+00E9, € is U+20AC, “ ” are U+201C and U+201D.
    assert.deepEqual(r.links, ['http://example.com/caf%C3%A9', 'http://example.com/%E2%82%AC', 'http://example.com/%E2%80%9Cq%E2%80%9D']);
  });

  test('UTF-8 page', () => {
    const r = extract(utf8('<a href="/ü?q=日本">x</a>'), 'text/html; charset=utf-8');
    assert.equal(r.charset, 'UTF-8');
    assert.deepEqual(r.links, ['http://example.com/%C3%BC?q=%E6%97%A5%E6%9C%AC']);
  });

  test('UTF-16 with a byte order mark, both byte orders', () => {
    const html = '<a href="/ü">x</a><a href="/b">y</a>';
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(html, 'utf16le')]);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(html, 'utf16le').swap16()]);
    for (const [body, charset] of [
      [le, 'UTF-16LE'],
      [be, 'UTF-16BE'],
    ] as const) {
      const r = extract(body, 'text/html');
      assert.equal(r.charset, charset);
      assert.deepEqual(r.links, ['http://example.com/%C3%BC', 'http://example.com/b']);
    }
  });
});

describe('extractLinks: order, duplicates and counts', () => {
  test('each link once, in document order, after normalization', () => {
    const html =
      '<a href="/d1">1</a><a href="/d2">2</a><a href="/d1#frag">1 again</a>' +
      '<a href="HTTP://EXAMPLE.com:80/d2">2 again</a><a href="/d3?sid=9">3</a><a href="/d3">3 again</a>';
    assert.deepEqual(links(html), ['http://example.com/d1', 'http://example.com/d2', 'http://example.com/d3']);
  });

  test('links longer than the limit are counted in tooLong, not returned', () => {
    const r = extract(utf8(`<a href="/${'x'.repeat(9000)}">long</a><a href="/ok">ok</a><a href="/${'y'.repeat(9000)}">long</a>`));
    assert.deepEqual(r.links, ['http://example.com/ok']);
    assert.equal(r.tooLong, 2);
    assert.equal(r.skipped, 0);
  });

  test('the length limit comes from the options', () => {
    const opts: NormalizeOptions = { sessionParams: new Set(), maxUrlLength: 25 };
    // 'http://example.com/' is 19 characters: 6 more fit, 7 do not.
    const r = extract(utf8('<a href="/123456">ok</a><a href="/1234567">long</a>'), 'text/html', opts);
    assert.deepEqual(r.links, ['http://example.com/123456']);
    assert.equal(r.tooLong, 1);
  });

  test('mailto:, javascript:, tel:, data: and malformed hrefs are counted in skipped', () => {
    const html =
      '<a href="mailto:a@example.com">m</a><a href="javascript:void(0)">j</a><a href="tel:123">t</a>' +
      '<a href="data:text/html,x">d</a><a href="http://[bad">b</a><a href="/kept">k</a>';
    const r = extract(utf8(html));
    assert.deepEqual(r.links, ['http://example.com/kept']);
    assert.equal(r.skipped, 5);
    assert.equal(r.tooLong, 0);
  });

  test('empty hrefs, fragment-only hrefs and <a> without href are neither links nor skipped', () => {
    const r = extract(utf8('<a href="">e</a><a href="  ">s</a><a href="#top">t</a><a>n</a>'));
    assert.deepEqual(r, {
      links: [],
      charset: 'UTF-8',
      tooLong: 0,
      skipped: 0,
      robots: { nofollow: false, noindex: false },
      relNofollow: 0,
    });
  });

  test('a page with no links', () => {
    assert.deepEqual(extract(new Uint8Array(0)), {
      links: [],
      charset: 'UTF-8',
      tooLong: 0,
      skipped: 0,
      robots: { nofollow: false, noindex: false },
      relNofollow: 0,
    });
  });
});

describe('extractLinks: frames and robots directives', () => {
  test('iframe[src] and frame[src] are followed like links', () => {
    const r = extract(
      utf8('<iframe src="toc.html"></iframe><frameset><frame src="/nav.html"><FRAME SRC="a.html"></frameset><img src="x.png">'),
    );
    assert.deepEqual(r.links, ['http://example.com/dir/toc.html', 'http://example.com/nav.html', 'http://example.com/dir/a.html']);
  });

  test('<meta name="robots" content="nofollow"> (or none): no link is followed; noindex is reported', () => {
    for (const content of ['nofollow', 'NoIndex, NoFollow', 'none']) {
      const r = extract(utf8(`<head><meta name="robots" content="${content}"></head><a href="a.html">a</a>`));
      assert.deepEqual(r.links, [], content);
      assert.equal(r.robots.nofollow, true, content);
    }
    const noindex = extract(utf8('<meta content="noindex" name="ROBOTS"><a href="a.html">a</a>'));
    assert.deepEqual(noindex.links, ['http://example.com/dir/a.html']);
    assert.deepEqual(noindex.robots, { nofollow: false, noindex: true });
    const other = extract(utf8('<meta name="googlebot" content="nofollow"><a href="a.html">a</a>'));
    assert.deepEqual(other.links, ['http://example.com/dir/a.html'], 'directives for another crawler are not ours');
  });

  test('rel="nofollow" links are followed unless obeyRelNofollow', () => {
    const body = utf8(
      '<a href="a.html" rel="nofollow">a</a><a href="b.html" rel="external nofollow">b</a><a href="c.html" rel="nofollowing">c</a>',
    );
    assert.equal(extract(body).links.length, 3);
    const r = extractLinks(body, 'http://example.com/dir/page.html', 'text/html', false, DEFAULT_NORMALIZE_OPTIONS, {
      obeyRelNofollow: true,
    });
    assert.deepEqual(r.links, ['http://example.com/dir/c.html']);
    assert.equal(r.relNofollow, 2);
  });
});
