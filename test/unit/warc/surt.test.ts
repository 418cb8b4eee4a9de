import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { getSurt } from 'warcio';
import { surt } from '../../../src/warc/surt.js';
import { exchangeRecords } from '../../../src/warc/warc-records.js';

/**
 * The CDXJ key is the SURT pywb computes to look a URL up (docs/warc.md, "The CDXJ index"):
 * the Python `surt` package's default canonicalization, which applies its Google rules, then
 * its Internet Archive rules, and writes the key without the scheme. Each expected value below
 * was worked out by hand from those rules; the comment names the rule the row checks.
 * G: the Google rules (fragment dropped; escapes unescaped repeatedly, then escaped once:
 * everything but letters, digits and printable ASCII other than space, `#` and `%`, uppercase
 * hex; host: dots cleaned, IP forms made dotted quads; path: `.` and `..` resolved, empty
 * segments dropped). IA: the Internet Archive rules (`www`, `www2`... dropped; user info and
 * default port dropped; path and query lowercased; session ids removed; one trailing slash
 * dropped unless the path is `/`; query arguments sorted by name then value, bytewise; empty
 * query dropped). K: the key (host labels reversed and joined by commas, IP addresses too,
 * `:port` kept, `)`, path, `?query`; no scheme).
 */
const TABLE: [url: string, key: string, rule: string][] = [
  ['http://example.com/dir/', 'com,example)/dir', 'IA: one trailing slash dropped'],
  ['http://example.com/dir/?a=1', 'com,example)/dir?a=1', 'IA: trailing slash dropped before a query'],
  ['http://example.com/', 'com,example)/', 'IA: the path `/` keeps its slash'],
  ['http://example.com', 'com,example)/', 'G: an empty path is `/`'],
  ['http://example.com/a%2Fb.html', 'com,example)/a/b.html', 'G: %2F unescaped; `/` is safe, so it stays a slash'],
  ['http://example.com/a%252Fb', 'com,example)/a/b', 'G: unescaped repeatedly (%25 2F, then %2F)'],
  ['http://example.com/caf%C3%A9', 'com,example)/caf%c3%a9', 'G: non-ASCII escaped again; IA: path lowercased, escapes too'],
  ['http://example.com/caf\u00e9', 'com,example)/caf%c3%a9', 'G: a raw non-ASCII path is UTF-8, escaped'],
  ['http://example.com/a%20b', 'com,example)/a%20b', 'G: space is escaped'],
  ['http://example.com/%7Euser', 'com,example)/~user', 'G: `~` is never escaped'],
  ['http://example.com/a%3Fb', 'com,example)/a?b', 'G: `?` is safe, so an escaped one is written plain'],
  ['http://example.com/100%', 'com,example)/100%25', 'G: a `%` that is not an escape is escaped'],
  ['http://example.com/a%23b', 'com,example)/a%23b', 'G: `#` is escaped'],
  ['http://example.com/a/./b/../c', 'com,example)/a/c', 'G: `.` and `..` segments resolved'],
  ['http://example.com/%2e%2e/a', 'com,example)/../a', 'G: a `..` with nothing to pop is kept'],
  ['http://example.com//a//b', 'com,example)/a/b', 'G: empty segments dropped'],
  ['http://example.com/a;jsessionid=X/b;p=1', 'com,example)/a;jsessionid=x/b;p=1', 'G: `;` params are path, kept; IA: lowercased'],
  ['http://example.com/A/B.HTML', 'com,example)/a/b.html', 'IA: path lowercased'],
  ['HTTP://EXAMPLE.COM/X', 'com,example)/x', 'G and IA: host lowercased'],
  ['http://www.example.com/', 'com,example)/', 'IA: `www.` dropped'],
  ['http://www2.example.com/x', 'com,example)/x', 'IA: `www` and digits dropped'],
  ['http://wwwexample.com/', 'com,wwwexample)/', 'IA: only `www` followed by a dot'],
  ['http://sub.www.example.com/', 'com,example,www,sub)/', 'IA: `www` only as the first label'],
  ['http://example.com./', 'com,example)/', 'G: a trailing dot of the host dropped'],
  ['http://user:pass@example.com/', 'com,example)/', 'IA: user info dropped'],
  ['http://example.com:8080/x', 'com,example:8080)/x', 'K: a port kept'],
  ['http://example.com:80/x', 'com,example)/x', 'IA: the default port of http dropped'],
  ['https://example.com:443/x', 'com,example)/x', 'IA: the default port of https dropped'],
  ['https://example.com:80/x', 'com,example:80)/x', 'IA: 80 is not the default port of https'],
  ['https://example.com/x', 'com,example)/x', 'K: no scheme: https and http share a key'],
  ['http://example.com/x#frag', 'com,example)/x', 'G: fragment dropped'],
  ['http://example.com/x?', 'com,example)/x', 'IA: empty query dropped'],
  ['http://example.com/x?b=2&a=1', 'com,example)/x?a=1&b=2', 'IA: arguments sorted'],
  ['http://example.com/x?B=2&a=1', 'com,example)/x?a=1&b=2', 'IA: query lowercased, then sorted'],
  ['http://example.com/x?a=2&a=1&a', 'com,example)/x?a&a=1&a=2', 'IA: sorted by name, then value; no `=` first'],
  ['http://example.com/x?a=%26', 'com,example)/x?&a=', 'G: %26 unescaped to `&` (safe); IA: then it splits arguments'],
  ['http://example.com/?q=a%2Fb', 'com,example)/?q=a/b', 'G: the query unescaped, `/` safe'],
  ['http://example.com/?q=%41%42', 'com,example)/?q=ab', 'G: escapes of letters undone; IA: lowercased'],
  ['http://example.com/?r=%20&q=a+b', 'com,example)/?q=a+b&r=%20', 'G: `+` kept, space escaped; IA: sorted'],
  ['http://example.com/?q=%E2%9C%93', 'com,example)/?q=%e2%9c%93', 'G: non-ASCII escaped again; IA: lowercased'],
  ['http://example.com/x?jsessionid=0123456789abcdef0123456789ABCDEF&a=1', 'com,example)/x?a=1', 'IA: session id removed'],
  ['http://127.0.0.1:8080/p', '1,0,0,127:8080)/p', 'K: an IP address is reversed too'],
  ['http://2130706433/', '1,0,0,127)/', 'G: a host of digits is an IPv4 address'],
  ['http://0177.0.0.1/', '1,0,0,127)/', 'G: an octal part read as the C library does'],
  ['http://1.2.3/', '3,0,2,1)/', 'G: three parts, the last fills two bytes'],
  ['http://[::1]:8080/', '::1:8080)/', 'K: an IPv6 address without brackets, not reversed (no dots)'],
  ['http://b\u00fccher.example/', 'example,xn--bcher-kva)/', 'G: a non-ASCII host in IDNA form'],
  ['  http://exa\tmple.com/x \n', 'com,example)/x', 'parse: whitespace at the ends, tab/CR/LF anywhere removed'],
  ['example.com/x', 'com,example)/x', 'parse: no scheme is http'],
];

describe('SURT keys of the CDXJ index are the keys pywb looks up (docs/warc.md)', () => {
  for (const [url, key, rule] of TABLE) {
    test(`${JSON.stringify(url)} -> ${key} (${rule})`, () => {
      assert.equal(surt(url), key);
    });
  }

  test('an invalid port is an error (as in the Python package), not a key', () => {
    assert.throws(() => surt('http://example.com:99999/'));
    assert.throws(() => surt('http://example.com:8x/'));
  });

  test('warcio.js keys differ on the shapes the issue names: ours are not its', () => {
    assert.equal(getSurt('http://example.com/dir/'), 'com,example)/dir/');
    assert.equal(surt('http://example.com/dir/'), 'com,example)/dir');
  });

  test('the index line of a response record is keyed by this SURT', async () => {
    const [response] = await exchangeRecords({
      url: 'http://www.example.com/Dir/?b=2&a=1',
      startedMs: Date.parse('2026-11-23T12:00:00Z'),
      requestHeaders: {},
      status: 200,
      statusText: 'OK',
      rawHeaders: ['Content-Type', 'text/html'],
      body: Buffer.from('<p>hi</p>'),
      truncated: false,
    });
    assert.equal(response.surt, 'com,example)/dir?a=1&b=2');
  });
});
