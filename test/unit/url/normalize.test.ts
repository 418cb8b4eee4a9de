import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { urlKey } from '../../../src/url/key.js';
import {
  DEFAULT_MAX_URL_LENGTH,
  DEFAULT_NORMALIZE_OPTIONS,
  DEFAULT_SESSION_PARAMS,
  NORMALIZATION_VERSION,
  normalizeUrl,
  type NormalizeOptions,
  type RejectReason,
} from '../../../src/url/normalize.js';

/**
 * Fixed vectors of URL normalization: the on-disk contract (docs/url-keys.md). Every expected
 * value here was written by hand from the rules, not copied from the code. If one of these
 * fails, keys on existing data directories would change: do not "fix" the vector, bump
 * NORMALIZATION_VERSION and say so in docs/url-keys.md.
 */

interface Vector {
  /** What the vector shows. */
  readonly rule: string;
  readonly input: string;
  /** The page the input was found on, for relative links. */
  readonly base?: string;
  /** The normalized URL, or the reason the input is rejected. */
  readonly expect: string | { readonly reject: RejectReason };
}

const reject = (reason: RejectReason): { readonly reject: RejectReason } => ({ reject: reason });

const VECTORS: readonly Vector[] = [
  // Scheme and host are case-insensitive: lowercased. The path is case-sensitive: kept.
  { rule: 'scheme and host lowercased, path case kept', input: 'HTTP://Example.COM/A/b', expect: 'http://example.com/A/b' },
  { rule: 'https lowercased too', input: 'HTTPS://WWW.Example.Org/Index.HTML', expect: 'https://www.example.org/Index.HTML' },
  { rule: 'empty path becomes /', input: 'http://example.com', expect: 'http://example.com/' },
  // A fully qualified name (trailing dot) is the same server: one trailing dot is dropped.
  { rule: 'trailing dot of the host dropped', input: 'http://Example.com./a', expect: 'http://example.com/a' },
  { rule: 'trailing dot dropped, port kept', input: 'http://example.com.:8080/', expect: 'http://example.com:8080/' },

  // International host names: punycode (IDNA), lowercased first.
  { rule: 'IDN host to punycode', input: 'http://münchen.de/', expect: 'http://xn--mnchen-3ya.de/' },
  { rule: 'IDN host uppercase folded', input: 'http://MÜNCHEN.de/Straße', expect: 'http://xn--mnchen-3ya.de/Stra%C3%9Fe' },
  { rule: 'IDN host, Japanese', input: 'http://例え.jp/', expect: 'http://xn--r8jz45g.jp/' },
  { rule: 'punycode host kept as given', input: 'http://xn--mnchen-3ya.de/', expect: 'http://xn--mnchen-3ya.de/' },
  { rule: 'invalid punycode host rejected', input: 'http://xn--zz.com/', expect: reject('invalid') },

  // Ports: the scheme's default port is dropped, any other port kept.
  { rule: 'http default port 80 dropped', input: 'http://example.com:80/', expect: 'http://example.com/' },
  { rule: 'https default port 443 dropped', input: 'https://example.com:443/x', expect: 'https://example.com/x' },
  { rule: '443 is not the default of http', input: 'http://example.com:443/', expect: 'http://example.com:443/' },
  { rule: '80 is not the default of https', input: 'https://example.com:80/', expect: 'https://example.com:80/' },
  { rule: 'other port kept', input: 'http://example.com:8080/x', expect: 'http://example.com:8080/x' },
  { rule: 'leading zeros of a port dropped', input: 'http://example.com:08080/', expect: 'http://example.com:8080/' },
  { rule: 'port out of range rejected', input: 'http://example.com:99999/', expect: reject('invalid') },
  { rule: 'non-numeric port rejected', input: 'http://example.com:abc/', expect: reject('invalid') },

  // IP addresses: IPv4 in any spelling becomes dotted decimal; IPv6 lowercased and compressed.
  { rule: 'IPv4 kept', input: 'http://192.168.0.1/', expect: 'http://192.168.0.1/' },
  { rule: 'IPv4 octal spelling', input: 'http://0177.0.0.1/', expect: 'http://127.0.0.1/' },
  { rule: 'IPv4 as one number', input: 'http://2130706433/', expect: 'http://127.0.0.1/' },
  { rule: 'IPv6 lowercased, port kept', input: 'https://[2001:DB8::1]:8443/', expect: 'https://[2001:db8::1]:8443/' },
  { rule: 'IPv6 loopback', input: 'http://[::1]:8080/x', expect: 'http://[::1]:8080/x' },
  { rule: 'IPv4-mapped IPv6 in hex', input: 'http://[::FFFF:10.0.0.1]/', expect: 'http://[::ffff:a00:1]/' },

  // The fragment never reaches the server: dropped.
  { rule: 'fragment dropped', input: 'http://example.com/a#frag', expect: 'http://example.com/a' },
  { rule: 'fragment after query dropped', input: 'http://example.com/a?q=1#f?g', expect: 'http://example.com/a?q=1' },
  { rule: 'fragment that looks like a query dropped', input: 'http://example.com/#?a', expect: 'http://example.com/' },

  // Dot segments resolved, also when percent-encoded.
  { rule: 'dot segments', input: 'http://example.com/a/./b/../c', expect: 'http://example.com/a/c' },
  { rule: 'dot segments above the root', input: 'http://example.com/a/b/../../../c', expect: 'http://example.com/c' },
  { rule: 'encoded dot segments %2e%2E', input: 'http://example.com/a/%2e%2E/b', expect: 'http://example.com/b' },
  { rule: 'half-encoded dot segment .%2e', input: 'http://example.com/a/.%2e/b', expect: 'http://example.com/b' },

  // Existing percent escapes are kept byte for byte: never decoded, re-cased or double-encoded.
  { rule: '%2F and %2f kept as they are', input: 'http://example.com/%2F%2f', expect: 'http://example.com/%2F%2f' },
  { rule: '%2f in path and query kept', input: 'http://example.com/a%2fb?x=%2F%2f', expect: 'http://example.com/a%2fb?x=%2F%2f' },
  { rule: 'invalid escape %zz kept', input: 'http://example.com/%zz?a=%zz', expect: 'http://example.com/%zz?a=%zz' },
  { rule: 'lone % kept, not encoded as %25', input: 'http://example.com/a%', expect: 'http://example.com/a%' },
  { rule: '%% kept', input: 'http://example.com/%%41', expect: 'http://example.com/%%41' },
  { rule: 'unreserved escape %7E not decoded', input: 'http://example.com/%7Euser/~x', expect: 'http://example.com/%7Euser/~x' },
  { rule: 'escaped UTF-8 kept', input: 'http://example.com/caf%C3%A9', expect: 'http://example.com/caf%C3%A9' },
  { rule: 'escaped latin-1 byte kept', input: 'http://example.com/?b=%E9', expect: 'http://example.com/?b=%E9' },
  { rule: '+ and %20 both kept', input: 'http://example.com/?q=a+b%20c', expect: 'http://example.com/?q=a+b%20c' },

  // Raw spaces and non-ASCII are percent-encoded as UTF-8 (WHATWG percent-encode sets).
  { rule: 'raw spaces in path and query', input: 'http://example.com/a b/ c?c d', expect: 'http://example.com/a%20b/%20c?c%20d' },
  { rule: 'non-ASCII path and query as UTF-8', input: 'http://example.com/é?q=é', expect: 'http://example.com/%C3%A9?q=%C3%A9' },
  { rule: 'CJK in query', input: 'http://example.com/?q=café&r=日本', expect: 'http://example.com/?q=caf%C3%A9&r=%E6%97%A5%E6%9C%AC' },
  { rule: 'astral character (4 bytes)', input: 'http://example.com/\u{1F600}', expect: 'http://example.com/%F0%9F%98%80' },
  { rule: 'no-break space', input: 'http://example.com/\u00a0', expect: 'http://example.com/%C2%A0' },
  {
    rule: 'path set: { } ` " < > encoded, | ^ kept',
    input: 'http://example.com/{a}|^`"<>',
    expect: 'http://example.com/%7Ba%7D|^%60%22%3C%3E',
  },
  {
    rule: 'query set: \' " < > encoded, { } | ^ ` kept',
    input: 'http://example.com/?a={b}|^`\'"<>',
    expect: 'http://example.com/?a={b}|^`%27%22%3C%3E',
  },
  { rule: 'tab and newline removed', input: 'http://example.com/a\tb\nc', expect: 'http://example.com/abc' },
  { rule: 'surrounding spaces trimmed', input: '  http://example.com/x  ', expect: 'http://example.com/x' },

  // Session ids: query parameters named like a session id are removed (name compared
  // case-insensitively); every other byte and the order of what is left stay as they were.
  { rule: 'SID removed, order kept', input: 'http://example.com/?a=1&SID=2&b=3', expect: 'http://example.com/?a=1&b=3' },
  { rule: 'PHPSESSID first', input: 'http://example.com/?PHPSESSID=x&a=1', expect: 'http://example.com/?a=1' },
  { rule: 'only jsessionid: query dropped', input: 'http://example.com/?jsessionid=x', expect: 'http://example.com/' },
  { rule: 'sid without value', input: 'http://example.com/?a&sid', expect: 'http://example.com/?a' },
  { rule: 'bare sid alone', input: 'http://example.com/?sid', expect: 'http://example.com/' },
  { rule: 'mixed case SiD, escapes of the rest kept', input: 'http://example.com/?SiD=9&x=%2F', expect: 'http://example.com/?x=%2F' },
  { rule: 'duplicates of other params kept', input: 'http://example.com/?a=1&sid=2&a=1', expect: 'http://example.com/?a=1&a=1' },
  { rule: 'empty parts kept as bytes', input: 'http://example.com/?a=1&&sid=2', expect: 'http://example.com/?a=1&' },
  {
    rule: 'names that only contain sid kept',
    input: 'http://example.com/?sidx=1&xsid=2&sid_=3',
    expect: 'http://example.com/?sidx=1&xsid=2&sid_=3',
  },
  {
    rule: 'every default session name removed',
    input: 'http://example.com/?jsessionid=1&ASPSESSIONID=2&cfid=3&cftoken=4&session_id=5&sessionid=6&keep=7',
    expect: 'http://example.com/?keep=7',
  },
  {
    rule: ';sid inside a query value is not a path parameter',
    input: 'http://example.com/a?b=c;sid=1',
    expect: 'http://example.com/a?b=c;sid=1',
  },

  // `;name=value` path parameters with a session name are removed; others kept.
  { rule: ';jsessionid path parameter removed', input: 'http://example.com/a;jsessionid=1', expect: 'http://example.com/a' },
  { rule: ';jsessionid before a query', input: 'http://example.com/a;jsessionid=ABC?x=1', expect: 'http://example.com/a?x=1' },
  {
    rule: 'uppercase ;JSESSIONID, other parameter kept',
    input: 'http://example.com/a;JSESSIONID=ABC;foo=1/b',
    expect: 'http://example.com/a;foo=1/b',
  },
  { rule: ';sid in the middle', input: 'http://example.com/a;sid=1;b=2', expect: 'http://example.com/a;b=2' },
  { rule: 'path parameter in every segment', input: 'http://example.com/a;jsessionid=1/b;jsessionid=2', expect: 'http://example.com/a/b' },
  { rule: 'path parameter on the root', input: 'http://example.com/;jsessionid=X?y=1', expect: 'http://example.com/?y=1' },
  { rule: ';jsessionid without = kept', input: 'http://example.com/a;jsessionid', expect: 'http://example.com/a;jsessionid' },

  // An empty query says nothing: dropped.
  { rule: 'empty query dropped', input: 'http://example.com/?', expect: 'http://example.com/' },
  { rule: 'empty query on a path', input: 'http://example.com/x?', expect: 'http://example.com/x' },
  { rule: 'empty query without path', input: 'http://example.com?', expect: 'http://example.com/' },
  { rule: 'empty query and fragment', input: 'http://example.com/?#', expect: 'http://example.com/' },

  // User info is never part of the address of a page: dropped.
  { rule: 'user and password dropped', input: 'http://user:pw@example.com/', expect: 'http://example.com/' },
  { rule: 'user dropped, port kept', input: 'http://user@example.com:8080/', expect: 'http://example.com:8080/' },
  { rule: 'password only dropped', input: 'http://:pw@example.com/', expect: 'http://example.com/' },

  // Relative links resolve against the page (or its <base>).
  { rule: 'sibling', input: 'c', base: 'http://example.com/a/b', expect: 'http://example.com/a/c' },
  { rule: 'parent', input: '../c', base: 'http://example.com/a/b/', expect: 'http://example.com/a/c' },
  { rule: 'root-relative', input: '/c', base: 'http://example.com/a/b', expect: 'http://example.com/c' },
  { rule: 'current directory', input: './', base: 'http://example.com/a/b', expect: 'http://example.com/a/' },
  { rule: 'query only', input: '?x=1', base: 'http://example.com/a/b', expect: 'http://example.com/a/b?x=1' },
  { rule: 'empty href is the page itself', input: '', base: 'http://example.com/a/b?q#f', expect: 'http://example.com/a/b?q' },
  { rule: 'fragment only is the page itself', input: '#frag', base: 'http://example.com/a/b?q', expect: 'http://example.com/a/b?q' },
  { rule: 'scheme-relative same scheme', input: 'https:x', base: 'https://example.com/a/', expect: 'https://example.com/a/x' },
  { rule: 'base port kept', input: 'x', base: 'http://example.com:8080/a/', expect: 'http://example.com:8080/a/x' },

  // Protocol-relative links take the page's scheme; the port default is that scheme's.
  { rule: 'protocol-relative', input: '//other.com/x', base: 'https://example.com/', expect: 'https://other.com/x' },
  {
    rule: 'protocol-relative, default port dropped',
    input: '//Other.COM:443/x',
    base: 'https://example.com/',
    expect: 'https://other.com/x',
  },
  {
    rule: 'protocol-relative, port 80 under https kept',
    input: '//other.com:80/x',
    base: 'https://example.com/',
    expect: 'https://other.com:80/x',
  },
  { rule: 'protocol-relative without base', input: '//example.com/', expect: reject('invalid') },

  // Backslashes count as slashes in http(s) paths (as browsers do), but not in the query.
  { rule: 'backslashes after the scheme', input: 'http:\\\\example.com\\a\\b', expect: 'http://example.com/a/b' },
  { rule: 'backslashes in the path', input: 'http://example.com\\a\\b', expect: 'http://example.com/a/b' },
  { rule: 'backslash in the query kept', input: 'HTTP://example.com/a\\b?c\\d', expect: 'http://example.com/a/b?c\\d' },
  { rule: 'backslash protocol-relative', input: '\\\\other.com\\x', base: 'http://example.com/', expect: 'http://other.com/x' },

  // Only http and https are crawled.
  { rule: 'mailto', input: 'mailto:someone@example.com', expect: reject('scheme') },
  { rule: 'javascript', input: 'javascript:void(0)', expect: reject('scheme') },
  { rule: 'javascript, relative to a page', input: 'JavaScript:alert(1)', base: 'http://example.com/', expect: reject('scheme') },
  { rule: 'tel', input: 'tel:+1-555-0100', expect: reject('scheme') },
  { rule: 'data', input: 'data:text/html,hi', expect: reject('scheme') },
  { rule: 'ftp', input: 'ftp://example.com/file', expect: reject('scheme') },
  { rule: 'file', input: 'file:///etc/passwd', expect: reject('scheme') },
  { rule: 'ws', input: 'ws://example.com/', expect: reject('scheme') },
  { rule: 'about', input: 'about:blank', expect: reject('scheme') },

  // Anything that is not a URL.
  { rule: 'words', input: 'not a url', expect: reject('invalid') },
  { rule: 'relative without base', input: '/relative', expect: reject('invalid') },
  { rule: 'no host', input: 'http://', expect: reject('invalid') },
  { rule: 'no host, https', input: 'https://', expect: reject('invalid') },
  { rule: 'space in host', input: 'http://exa mple.com/', expect: reject('invalid') },
  { rule: 'escaped space in host', input: 'http://exam%20ple.com/', expect: reject('invalid') },
  { rule: 'unclosed IPv6 bracket', input: 'http://[::1', expect: reject('invalid') },
  { rule: 'unclosed IPv6 bracket, relative', input: 'http://[bad', base: 'http://example.com/', expect: reject('invalid') },

  // A host name that cannot become one directory name.
  { rule: 'host longer than 160 bytes', input: `http://${'a'.repeat(200)}.com/`, expect: reject('unsafe-host') },
];

const VECTOR_OPTIONS: NormalizeOptions = DEFAULT_NORMALIZE_OPTIONS;

describe('normalizeUrl: fixed vectors (on-disk contract, NORMALIZATION_VERSION 1)', () => {
  test('the vectors are for version 1', () => {
    // A new version needs new vectors: update this table and docs/url-keys.md with it.
    assert.equal(NORMALIZATION_VERSION, 1);
  });

  for (const v of VECTORS) {
    const label = `${v.rule}: ${JSON.stringify(v.input.length > 80 ? `${v.input.slice(0, 40)}...` : v.input)}`;
    test(label, () => {
      const r = normalizeUrl(v.input, v.base, VECTOR_OPTIONS);
      if (typeof v.expect === 'string') {
        assert.deepEqual(r.ok ? r.url : r, v.expect);
      } else {
        assert.deepEqual(r, { ok: false, reason: v.expect.reject });
      }
    });
  }
});

describe('normalizeUrl: properties of the result', () => {
  const accepted = VECTORS.filter((v) => typeof v.expect === 'string');

  test('normalizing a normalized URL gives it back unchanged (idempotent)', () => {
    for (const v of accepted) {
      const url = v.expect as string;
      const again = normalizeUrl(url);
      assert.ok(again.ok, url);
      assert.equal(again.url, url);
    }
  });

  test('every normalized URL is printable ASCII', () => {
    for (const v of accepted) assert.match(v.expect as string, /^[\x21-\x7e]+$/);
  });

  test('the host directory comes with the URL', () => {
    const cases: readonly [string, string][] = [
      ['HTTP://Example.COM:80/A', 'example.com'],
      ['http://example.com:8080/x', 'example.com_8080'],
      ['https://example.com:80/', 'example.com_80'],
      ['http://münchen.de/', 'xn--mnchen-3ya.de'],
      ['http://[::1]:8080/x', '[--1]_8080'],
      ['http://[::FFFF:10.0.0.1]/', '[--ffff-a00-1]'],
    ];
    for (const [input, hostDir] of cases) {
      const r = normalizeUrl(input);
      assert.ok(r.ok, input);
      assert.equal(r.hostDir, hostDir, input);
    }
  });

  test('a base may be given as a URL object as well as a string', () => {
    const r = normalizeUrl('../x', new URL('http://example.com/a/b/'));
    assert.deepEqual(r, { ok: true, url: 'http://example.com/a/x', hostDir: 'example.com' });
  });

  test('the default session parameters are the documented list', () => {
    assert.deepEqual(
      [...DEFAULT_SESSION_PARAMS],
      ['sid', 'sessionid', 'session_id', 'phpsessid', 'jsessionid', 'aspsessionid', 'cfid', 'cftoken'],
    );
    assert.ok(Object.isFrozen(DEFAULT_SESSION_PARAMS));
  });
});

describe('normalizeUrl: options', () => {
  const noSessionParams: NormalizeOptions = { sessionParams: new Set(), maxUrlLength: DEFAULT_MAX_URL_LENGTH };

  test('an empty sessionParams set keeps every parameter', () => {
    const cases: readonly [string, string][] = [
      ['http://example.com/?a=1&SID=2&b=3', 'http://example.com/?a=1&SID=2&b=3'],
      ['http://example.com/a;jsessionid=1?sid=2', 'http://example.com/a;jsessionid=1?sid=2'],
      ['http://example.com/?PHPSESSID=x', 'http://example.com/?PHPSESSID=x'],
    ];
    for (const [input, expected] of cases) {
      const r = normalizeUrl(input, undefined, noSessionParams);
      assert.ok(r.ok, input);
      assert.equal(r.url, expected);
    }
  });

  test('an empty query is dropped even with no session parameters', () => {
    const r = normalizeUrl('http://example.com/x?', undefined, noSessionParams);
    assert.ok(r.ok);
    assert.equal(r.url, 'http://example.com/x');
  });

  test('a custom session parameter list replaces the default one (names given lowercase)', () => {
    const opts: NormalizeOptions = { sessionParams: new Set(['token']), maxUrlLength: DEFAULT_MAX_URL_LENGTH };
    const r = normalizeUrl('http://example.com/p;TOKEN=1?sid=2&Token=3&x=4', undefined, opts);
    assert.ok(r.ok);
    assert.equal(r.url, 'http://example.com/p?sid=2&x=4');
  });

  test('the default limit: 8192 characters of the normalized URL pass, 8193 do not', () => {
    const prefix = 'http://example.com/';
    const exact = prefix + 'x'.repeat(DEFAULT_MAX_URL_LENGTH - prefix.length);
    assert.equal(exact.length, 8192);
    const ok = normalizeUrl(exact);
    assert.ok(ok.ok);
    assert.equal(ok.url, exact);
    assert.deepEqual(normalizeUrl(`${exact}x`), { ok: false, reason: 'too-long' });
  });

  test('the limit counts the normalized form (escapes included, session ids and fragment excluded)', () => {
    const opts: NormalizeOptions = { sessionParams: DEFAULT_NORMALIZE_OPTIONS.sessionParams, maxUrlLength: 24 };
    // 'http://example.com/' is 19 characters.
    assert.deepEqual(normalizeUrl('http://example.com/abcde', undefined, opts), {
      ok: true,
      url: 'http://example.com/abcde',
      hostDir: 'example.com',
    });
    assert.deepEqual(normalizeUrl('http://example.com/abcdef', undefined, opts), { ok: false, reason: 'too-long' });
    // 'é' is 1 character raw but 6 once encoded (%C3%A9): 19 + 6 = 25 > 24.
    assert.deepEqual(normalizeUrl('http://example.com/é', undefined, opts), { ok: false, reason: 'too-long' });
    // What is removed does not count.
    assert.deepEqual(normalizeUrl('http://example.com/abcde?sid=123456789#fragment', undefined, opts), {
      ok: true,
      url: 'http://example.com/abcde',
      hostDir: 'example.com',
    });
  });

  test('a scheme is rejected as such before any length check', () => {
    const opts: NormalizeOptions = { sessionParams: new Set(), maxUrlLength: 10 };
    assert.deepEqual(normalizeUrl('mailto:someone-with-a-long-name@example.com', undefined, opts), {
      ok: false,
      reason: 'scheme',
    });
  });
});

/**
 * Keys of raw URLs: normalize, then SHA-224. Expected keys were computed independently
 * with `printf %s NORMALIZED_URL | sha224sum`, never with the code under test.
 */
const KEY_VECTORS: readonly { readonly input: string; readonly url: string; readonly key: string }[] = [
  {
    input: 'HTTP://Example.COM:80/#top',
    url: 'http://example.com/',
    key: '599370d5687c3fd078c314add6d37c2d714e57a5d9157d4a703cfcc0',
  },
  {
    input: 'https://München.de:443/straße?q=%2F&PHPSESSID=abc',
    url: 'https://xn--mnchen-3ya.de/stra%C3%9Fe?q=%2F',
    key: '116fb8a6360934408a9ef85c725c7ddba137e571ecb444c53c2fb3ac',
  },
  {
    input: 'http://user:pw@example.com:8080/a b?x=1&sid=9&y=2',
    url: 'http://example.com:8080/a%20b?x=1&y=2',
    key: '2da7674b3d66429ec5ca116b32095200398d9978606ef3441b0e4ddc',
  },
  {
    input: 'http://[0:0:0:0:0:0:0:1]:8080/x;jsessionid=1',
    url: 'http://[::1]:8080/x',
    key: '9a551fc21626b5f5249e9d528df7ccfb1529e56c52b1e0255ca45caa',
  },
  {
    input: 'https://example.com/日本.html?',
    url: 'https://example.com/%E6%97%A5%E6%9C%AC.html',
    key: '379d889c517687a945bbd8f4dfaa03be4e8a9086781d1d5d74f9b157',
  },
];

describe('keys of raw URLs (fixed vectors)', () => {
  for (const v of KEY_VECTORS) {
    test(v.input, () => {
      const r = normalizeUrl(v.input);
      assert.ok(r.ok);
      assert.equal(r.url, v.url);
      assert.equal(urlKey(r.url), v.key);
    });
  }

  test('different spellings of one address share one key', () => {
    const spellings = ['http://example.com', 'HTTP://EXAMPLE.COM:80/', 'http://example.com/?', 'http://u@example.com/#x'];
    const keys = new Set(
      spellings.map((s) => {
        const r = normalizeUrl(s);
        assert.ok(r.ok, s);
        return urlKey(r.url);
      }),
    );
    assert.deepEqual([...keys], ['599370d5687c3fd078c314add6d37c2d714e57a5d9157d4a703cfcc0']);
  });

  test('%2F and %2f are different URLs with different keys', () => {
    const upper = normalizeUrl('http://example.com/a%2Fb');
    const lower = normalizeUrl('http://example.com/a%2fb');
    assert.ok(upper.ok && lower.ok);
    assert.notEqual(urlKey(upper.url), urlKey(lower.url));
  });
});
