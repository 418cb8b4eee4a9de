import { domainToASCII } from 'node:url';

/**
 * The SURT key of a URL as pywb computes it to look a URL up in a CDXJ index: the Python
 * `surt` package's default canonicalization (its Google and Internet Archive rules), without
 * the scheme (docs/warc.md, "The CDXJ index"). Written from the rules that package documents
 * and implements; test/unit/warc/surt.test.ts checks a table of URL shapes against them.
 *
 * The steps work on bytes (a URL's UTF-8, held as a latin1 string: one char per byte), as the
 * Python package does. Throws on a URL it cannot parse (an invalid port), as the package does.
 */
export function surt(url: string): string {
  if (url === '') return '-';
  if (url.startsWith('filedesc')) return url;
  const u = parse(toBytes(url));
  canonicalizeGoogle(u);
  canonicalizeIA(u);
  return serialize(u);
}

/** A parsed URL: every part as bytes (latin1 string), null when absent. */
interface Parts {
  scheme: string;
  host: string | null;
  port: number | null;
  path: string | null;
  query: string | null;
}

/** Lowercases A-Z only, as Python does for bytes. */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function toBytes(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}

/** RFC 2396, appendix B, with a URL of only a fragment allowed and the scheme's characters checked. */
const RFC2396 = /^(([a-zA-Z][a-zA-Z0-9+.-]*):)?((\/\/([^/?#]*))?([^?#]*)(\?([^#]*))?)?(#(.*))?$/s;

function parse(raw: string): Parts {
  // Whitespace at either end goes, and tab, CR and LF anywhere (a space inside stays).
  let url = raw.replace(/^[ \t\n\r\v\f]+|[ \t\n\r\v\f]+$/g, '').replace(/[\n\r\t]/g, '');
  if (!/^[a-zA-Z][a-zA-Z0-9+\-.]*:/.test(url)) url = `http://${url}`;
  // `http://https://host/`: the last of repeated http(s):// prefixes is the scheme.
  url = url.replace(/^(https?:\/\/)+/, (_all, last: string) => last);
  const m = RFC2396.exec(url)!;
  const scheme = m[2] ?? '';
  let netloc = m[5] ?? '';
  let path = m[6] || null;
  const query = m[8] || null;
  netloc = netloc.replace(/:+$/, '');
  // Host and port as Python's urlsplit finds them: after any user info, the host lowercased,
  // an IPv6 literal without its brackets; a port that is not a number from 0 to 65535 is an error.
  const hostinfo = netloc.slice(netloc.lastIndexOf('@') + 1);
  let hostname: string;
  let portText: string;
  if (hostinfo.startsWith('[')) {
    const close = hostinfo.indexOf(']');
    hostname = close < 0 ? hostinfo.slice(1) : hostinfo.slice(1, close);
    const rest = close < 0 ? '' : hostinfo.slice(close + 1);
    portText = rest.startsWith(':') ? rest.slice(1) : '';
  } else {
    const colon = hostinfo.indexOf(':');
    hostname = colon < 0 ? hostinfo : hostinfo.slice(0, colon);
    portText = colon < 0 ? '' : hostinfo.slice(colon + 1);
  }
  let port: number | null = null;
  if (portText !== '') {
    if (!/^[0-9]+$/.test(portText) || Number(portText) > 65535) throw new Error(`invalid port in ${raw}`);
    port = Number(portText) || null;
  }
  let host: string | null = asciiLower(hostname) || null;
  if (scheme.startsWith('http') && host === null && path !== null) {
    // `http:////host/path`: the host is the first segment of the path.
    const rest = path.replace(/^\/+/, '');
    const slash = rest.indexOf('/');
    host = slash < 0 ? rest : rest.slice(0, slash);
    path = `/${slash < 0 ? '' : rest.slice(slash + 1)}`;
  }
  return { scheme, host, port, path, query };
}

/** Decodes every %XX, again and again until nothing changes (`%2525` is `%`). */
function unescapeRepeatedly(s: string): string {
  for (;;) {
    const un = s.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    if (un === s) return s;
    s = un;
  }
}

/** Bytes left as they are by escapeOnce: letters, digits, and the printable ASCII but for space, `#` and `%`. */
const SAFE = /[A-Za-z0-9_.\-~!"$&'()*+,/:;<=>?@[\\\]^`{|}]/;

/** Percent-encodes (uppercase hex) every byte that is not SAFE: controls, space, `#`, `%`, and non-ASCII. */
function escapeOnce(s: string): string {
  let out = '';
  for (const c of s) out += SAFE.test(c) ? c : `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

function minimalEscape(s: string): string {
  return escapeOnce(unescapeRepeatedly(s));
}

/** The first set of rules (Google's): escapes made minimal, host cleaned and IP forms made dotted, path resolved. */
function canonicalizeGoogle(u: Parts): void {
  if (u.query !== null) u.query = minimalEscape(u.query);
  if (u.host) {
    let host = unescapeRepeatedly(u.host);
    if ([...host].some((c) => c.charCodeAt(0) > 0x7f)) {
      const ascii = domainToASCII(Buffer.from(host, 'latin1').toString('utf8'));
      if (ascii !== '') host = ascii;
    }
    host = host
      .split('..')
      .join('.')
      .replace(/^\.+|\.+$/g, '');
    u.host = ipv4Of(host) ?? escapeOnce(asciiLower(host));
  }
  let path = u.path === null ? null : unescapeRepeatedly(u.path);
  if (u.host) path = normalizePath(path);
  u.path = path === null ? null : escapeOnce(path);
}

/** `.` and `..` segments resolved, empty segments dropped, a trailing slash kept. */
function normalizePath(path: string | null): string {
  if (path === null || path === '') return '/';
  const kept: string[] = [];
  for (const p of path.split('/').slice(1)) {
    if (p === '.') continue;
    if (p === '..') {
      if (kept.length > 0) kept.pop();
      else kept.push(p);
    } else kept.push(p);
  }
  let out = '/';
  for (let i = 0; i < kept.length - 1; i++) if (kept[i] !== '') out += `${kept[i]}/`;
  return out + (kept.at(-1) ?? '');
}

const DECIMAL_IP = /^([1-9][0-9]*)(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$/;
const OCTAL_IP = /^(0[0-7]*)(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$/;

/**
 * A host that is an IPv4 address in another form, as a dotted quad: all digits is a 32-bit
 * number (taken modulo 2^32); one to four dotted numbers are read as the C library reads
 * them (a leading 0 is octal, the last part fills the bytes left). Else null.
 */
function ipv4Of(host: string): string | null {
  if (/^[0-9]+$/.test(host)) return dotted(Number(BigInt(host) & 0xffffffffn));
  if (!DECIMAL_IP.test(host) && !OCTAL_IP.test(host)) return null;
  const parts = host
    .split('.')
    .map((p) => (p.length > 1 && p.startsWith('0') ? (/^[0-7]+$/.test(p) ? Number.parseInt(p, 8) : Number.NaN) : Number(p)));
  if (parts.some((n) => !Number.isFinite(n))) return null;
  const last = parts.pop()!;
  if (parts.some((n) => n > 255) || last >= 256 ** (4 - parts.length)) return null;
  return dotted(parts.reduce((n, p, i) => n + p * 256 ** (3 - i), 0) + last);
}

function dotted(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

const PATH_SESSION_IDS = [/^(.*\/)(\((?:[a-z]\([0-9a-z]{24}\))+\)\/)([^?]+\.aspx.*)$/i, /^(.*\/)(\([0-9a-z]{24}\)\/)([^?]+\.aspx.*)$/i];
const QUERY_SESSION_IDS = [
  /^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$/i,
  /^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$/i,
];

/**
 * The second set of rules (the Internet Archive's): `www.` (and `www2.`...) dropped, a
 * default port dropped, path and query lowercased, session ids removed, one trailing slash
 * dropped (but for `/`), the query's arguments sorted, an empty query dropped.
 */
function canonicalizeIA(u: Parts): void {
  if (u.host) {
    u.host = asciiLower(u.host);
    if (u.scheme !== 'dns') u.host = u.host.replace(/^www[0-9]*\./, '');
  }
  const scheme = u.scheme.toLowerCase();
  if (u.port !== null && u.port === (scheme === 'http' ? 80 : scheme === 'https' ? 443 : 0)) u.port = null;
  let path = u.path;
  if (path !== null && path !== '') {
    path = asciiLower(path);
    for (const re of PATH_SESSION_IDS) {
      const m = re.exec(path);
      if (m) path = m[1]! + m[3]!;
    }
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  }
  u.path = path;
  let query = u.query;
  if (query !== null && query !== '') {
    for (const re of QUERY_SESSION_IDS) {
      const m = re.exec(query);
      if (m) query = m[2] ? m[1]! + m[2] : m[1]!;
    }
    query = sortQuery(asciiLower(query));
  }
  u.query = query === '' ? null : query;
}

/** The query's `&`-separated arguments sorted by name, then value (bytes), each written as it was. */
function sortQuery(query: string): string {
  if (query.length <= 1) return query;
  const args = query.split('&').map((a) => {
    const eq = a.indexOf('=');
    return eq < 0 ? { name: a, value: null } : { name: a.slice(0, eq), value: a.slice(eq + 1) };
  });
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  // An argument without `=` sorts before the same name with one (`a` < `a=`).
  args.sort(
    (a, b) => cmp(a.name, b.name) || (a.value === null ? (b.value === null ? 0 : -1) : b.value === null ? 1 : cmp(a.value, b.value)),
  );
  return args.map((a) => (a.value === null ? a.name : `${a.name}=${a.value}`)).join('&');
}

/** `host,reversed:port)path?query`, or `scheme:path` for a URL without a host (`urn:...`). */
function serialize(u: Parts): string {
  let s = '';
  if (u.host) {
    s += u.host.split('.').reverse().join(',');
    if (u.port !== null) s += `:${u.port}`;
    s += ')';
  } else {
    s = `${u.scheme}:`;
  }
  if (u.path !== null && u.path !== '') s += u.path;
  else if (u.query !== null) s += '/';
  if (u.query !== null) s += `?${u.query}`;
  return s;
}
