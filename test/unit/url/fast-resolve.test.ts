import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rng } from '../../../src/site/generated-site.js';
import { fastBaseOf, fastResolve } from '../../../src/url/fast-resolve.js';
import { DEFAULT_NORMALIZE_OPTIONS, normalizeLink, normalizeUrl } from '../../../src/url/normalize.js';

/**
 * The fast path of link resolution must give exactly what WHATWG parsing plus normalization
 * gives (the keys on disk depend on it): compared over many generated URLs, made of the
 * pieces real hrefs have and of the pieces where WHATWG parsing has special rules.
 */

const SCHEMES = [
  'http://',
  'https://',
  'HTTP://',
  'HtTpS://',
  'http:',
  'http:/',
  'https:///',
  'ftp://',
  'mailto:',
  'javascript:',
  'data:',
  '//',
  '///',
  '\\\\',
  '',
];
const HOSTS = [
  'example.com',
  'EXAMPLE.Com',
  'a-b.example',
  'www.site-0001.example',
  'localhost',
  '127.0.0.1',
  '127.0.0.10',
  '255.255.255.255',
  '127.000.0.1',
  '0x7f.0.0.1',
  '0177.0.0.1',
  '2130706433',
  '1.2.3',
  '256.1.1.1',
  '1.2.3.4.5',
  'ex..com',
  '.ex.com',
  'example.com.',
  'xn--mnchen-3ya.de',
  'xn--zz.com',
  'münchen.de',
  'a_b.com',
  'user@host.com',
  'u:p@host.com',
  '[::1]',
  '[2001:DB8::1]',
  'host%41.com',
  '-a.com',
  '1a.com',
  'a.1a',
  'a.0x1f',
  'a.09',
  'ex ample.com',
  '',
];
const PORTS = ['', '', '', ':80', ':443', ':8080', ':0', ':08080', ':65535', ':65536', ':', ':x', ':1'];
const SEGMENTS = [
  'a',
  'B',
  'index.html',
  'x.html',
  'products',
  '.',
  '..',
  '.',
  '..',
  '%2e',
  '%2E%2e',
  '.%2e',
  '%2e.',
  '',
  'a b',
  'ü',
  '%41',
  '%zz',
  '%',
  'a;sid=1',
  'a;jsessionid=X;b=2',
  "it's",
  'a:b',
  '~u',
  'a|b',
  'a^b',
  'a`b',
  '{x}',
  '[x]',
  'a\\b',
  'a\tb',
  '*',
  '@',
  "!$&'()*+,=",
  '...',
  '.hidden',
];
const QUERIES = [
  '',
  '',
  '',
  '?',
  '?a=1',
  '?a=1&sid=2',
  '?SID=x&b',
  "?q='x'",
  '?a b',
  '?a"b',
  '?ü',
  '?<x>',
  '?a=%2e',
  '?{}|^`\\',
  '??',
  '?a=1&',
  '?&',
  '?/a/../b',
];
const FRAGMENTS = ['', '', '#', '#x', '#a?b', '#\tq', '#ü'];
const BASES = [
  'http://example.com/dir/page.html',
  'https://Example.com:8443/a/b/',
  'http://127.0.0.10:41000/',
  'http://example.com./x/y',
  'http://u:p@example.com/d/',
  'http://example.com/dir/page.html?x=1#f',
  'http://[::1]:8080/v/',
  'https://www.site-0001.example/articles/12/story-3.html',
];

function generate(count: number, seed: number): string[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const segs = Array.from({ length: Math.floor(r() * 5) }, () => pick(SEGMENTS)).join('/');
    const tail = `${pick(QUERIES)}${pick(FRAGMENTS)}`;
    const form = r();
    if (form < 0.35) out.push(`${pick(SCHEMES)}${pick(HOSTS)}${pick(PORTS)}${r() < 0.8 ? '/' : ''}${segs}${tail}`);
    else if (form < 0.55) out.push(`/${segs}${tail}`);
    else if (form < 0.75) out.push(`${segs}${tail}`);
    else if (form < 0.85) out.push(`${pick(['./', '../', '../../', '.', '..', './../'])}${segs}${tail}`);
    else out.push(tail === '' ? `?${segs}` : tail);
  }
  return out;
}

describe('fast link resolution', () => {
  test('gives what WHATWG parsing and normalization give, over 100,000 generated URLs and 8 bases', () => {
    let fast = 0;
    let total = 0;
    for (const [b, baseText] of BASES.entries()) {
      const base = new URL(baseText);
      const fastBase = fastBaseOf(base);
      for (const href of generate(12_500, 1000 + b)) {
        if (href === '') continue;
        total++;
        if (fastResolve(href, fastBase) !== undefined) fast++;
        assert.deepEqual(
          normalizeLink(href, base, fastBase, DEFAULT_NORMALIZE_OPTIONS),
          normalizeUrl(href, base, DEFAULT_NORMALIZE_OPTIONS),
          `${href} against ${baseText}`,
        );
      }
    }
    // The comparison means something only if the fast path took a good share of the inputs.
    assert.ok(fast > total * 0.15, `fast path taken for ${fast} of ${total}`);
  });

  test('takes the common spellings of the benchmark pages', () => {
    const base = new URL('http://127.0.0.10:41000/docs/api/v2/alpha-bravo-12.html');
    const fastBase = fastBaseOf(base);
    for (const href of [
      '/blog/x-1.html',
      'y.html',
      './y.html',
      '../../guide/z.html',
      'http://127.0.0.11:41001/products/a-2/',
      '//127.0.0.12:41002/news/2023/11/b.html',
      'HTTP://127.0.0.10:41000/p.html',
      '/p.html#comments',
      '/cart/add?item=3',
      'http://www.example.com/share?u=http%3A%2F%2Fx',
    ]) {
      assert.notEqual(fastResolve(href, fastBase), undefined, href);
    }
  });

  test('leaves to WHATWG what it does not handle', () => {
    const base = new URL('http://example.com/d/p.html');
    const fastBase = fastBaseOf(base);
    for (const href of [
      'mailto:a@b.c',
      'javascript:void(0)',
      'http://münchen.de/',
      'http://0177.0.0.1/',
      'a/%2e%2e/b',
      'http://u@h.com/',
      'a:b',
      'http:x',
      'p ü',
      'http://[::1]/',
    ]) {
      assert.equal(fastResolve(href, fastBase), undefined, href);
    }
    // A base with user info, or none at all, sends every link the slow way.
    assert.equal(fastBaseOf(new URL('http://u:p@example.com/')), undefined);
    assert.equal(fastResolve('/a', undefined), undefined);
  });
});
