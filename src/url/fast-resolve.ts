/**
 * A fast path for resolving the links most pages have (`/a/b`, `x.html`, `../y/`,
 * `http://host/p?q`, `//host/p`) without building a WHATWG `URL` for each: about 40 per
 * page, each a parse in C++ and an object. It accepts only inputs whose WHATWG parse it
 * reproduces exactly (ASCII host names, dotted-quad IPv4, plain ports, paths and queries of
 * characters that WHATWG leaves as they are) and returns undefined for anything else, which
 * then takes the WHATWG path (normalizeUrl). test/unit/url/fast-resolve.test.ts compares the two
 * over many generated URLs: the keys (docs/url-keys.md) must not change.
 */

/** The parts of a resolved URL that normalization reads, as WHATWG `URL` would give them. */
export interface UrlParts {
  /** `http:` or `https:` */
  readonly protocol: string;
  /** Lowercase host name as WHATWG serializes it (may end with a dot). */
  readonly hostname: string;
  /** The port without the scheme's default, '' when none. */
  readonly port: string;
  /** Starts with `/`, dot segments resolved. */
  readonly pathname: string;
  /** `?...`, or '' for no query or an empty one. */
  readonly search: string;
}

/** A page's base URL, taken apart once for every link of the page. */
export interface FastBase {
  readonly protocol: string;
  readonly hostname: string;
  readonly port: string;
  readonly pathname: string;
  /** The pathname up to and including its last `/`. */
  readonly dir: string;
}

/** The fast base of a WHATWG URL, or undefined when links against it take the slow path. */
export function fastBaseOf(u: URL): FastBase | undefined {
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  if (u.username !== '' || u.password !== '' || u.hostname === '') return undefined;
  const pathname = u.pathname;
  // Relative links against a path with a dot-led segment take the slow path (see cleanPath).
  if (pathname.includes('/.')) return undefined;
  return { protocol: u.protocol, hostname: u.hostname, port: u.port, pathname, dir: pathname.slice(0, pathname.lastIndexOf('/') + 1) };
}

/** Character classes of ASCII (bit flags). */
const PATH = 1; // kept as it is in a path
const QUERY = 2; // kept as it is in a query of an http(s) URL
const HOST = 4; // in a host name we lowercase ourselves
const CLASS = new Uint8Array(128);
for (let c = 0x21; c < 0x7f; c++) {
  const ch = String.fromCharCode(c);
  // The query percent-encode set of special URLs: C0, space, " # < > and '.
  if (!'"#<>\''.includes(ch)) CLASS[c]! |= QUERY;
  // Path: also ? ` { } ^ are encoded; \ is a slash in http(s); | [ ] are left out to be safe.
  if (!'"#<>?`{}^\\|[]'.includes(ch)) CLASS[c]! |= PATH;
  if (/[A-Za-z0-9.-]/.test(ch)) CLASS[c]! |= HOST;
}

function allOf(s: string, from: number, to: number, cls: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || (CLASS[c]! & cls) === 0) return false;
  }
  return true;
}

/**
 * Resolves `href` (trimmed, not empty) against `base` as WHATWG URL parsing would, or returns
 * undefined when the input is outside what this fast path handles.
 */
export function fastResolve(href: string, base: FastBase | undefined): UrlParts | undefined {
  let end = href.indexOf('#');
  if (end < 0) end = href.length;
  if (end === 0) return undefined;
  const q = href.indexOf('?');
  const pathEnd = q >= 0 && q < end ? q : end;
  let search = '';
  if (pathEnd < end - 1) {
    if (!allOf(href, pathEnd + 1, end, QUERY)) return undefined;
    search = href.slice(pathEnd, end);
  }
  const c0 = href.charCodeAt(0);
  if (c0 === 0x2f /* / */) {
    if (href.charCodeAt(1) === 0x2f) {
      if (base === undefined) return undefined;
      return absolute(href, 2, pathEnd, base.protocol, search);
    }
    if (base === undefined) return undefined;
    const path = cleanPath(href, 0, pathEnd, '');
    return path === undefined ? undefined : { protocol: base.protocol, hostname: base.hostname, port: base.port, pathname: path, search };
  }
  if (c0 === 0x3f /* ? */) {
    if (base === undefined) return undefined;
    return { protocol: base.protocol, hostname: base.hostname, port: base.port, pathname: base.pathname, search };
  }
  const colon = href.indexOf(':');
  if (colon >= 0 && colon < pathEnd) {
    // A scheme: only http:// and https:// (any case) are handled here.
    let protocol: string;
    if (colon === 4 && href.slice(0, 4).toLowerCase() === 'http') protocol = 'http:';
    else if (colon === 5 && href.slice(0, 5).toLowerCase() === 'https') protocol = 'https:';
    else return undefined;
    if (href.charCodeAt(colon + 1) !== 0x2f || href.charCodeAt(colon + 2) !== 0x2f) return undefined;
    return absolute(href, colon + 3, pathEnd, protocol, search);
  }
  // A path relative to the base's directory.
  if (base === undefined) return undefined;
  const path = cleanPath(href, 0, pathEnd, base.dir);
  return path === undefined ? undefined : { protocol: base.protocol, hostname: base.hostname, port: base.port, pathname: path, search };
}

/** `host[:port][/path]` from `from` to `pathEnd` of `href`. */
function absolute(href: string, from: number, pathEnd: number, protocol: string, search: string): UrlParts | undefined {
  let slash = href.indexOf('/', from);
  if (slash < 0 || slash > pathEnd) slash = pathEnd;
  const colon = href.indexOf(':', from);
  const hostEnd = colon >= 0 && colon < slash ? colon : slash;
  const hostname = hostOf(href, from, hostEnd);
  if (hostname === undefined) return undefined;
  let port = '';
  if (hostEnd < slash) {
    port = href.slice(hostEnd + 1, slash);
    if (!/^[1-9][0-9]{0,4}$/.test(port) || Number(port) > 65535) return undefined;
    if ((protocol === 'http:' && port === '80') || (protocol === 'https:' && port === '443')) port = '';
  }
  const pathname = slash === pathEnd ? '/' : cleanPath(href, slash, pathEnd, '');
  return pathname === undefined ? undefined : { protocol, hostname, port, pathname, search };
}

/** A plain ASCII host name (lowercased) or a dotted-quad IPv4 address; undefined otherwise. */
function hostOf(href: string, from: number, to: number): string | undefined {
  if (to <= from || !allOf(href, from, to, HOST)) return undefined;
  const host = href.slice(from, to).toLowerCase();
  // Empty labels, a trailing dot, punycode (validated by WHATWG) and anything that WHATWG
  // parses as an IPv4 number (its last label starts with a digit) go the slow way, except
  // the canonical dotted quad.
  if (host.charCodeAt(0) === 0x2e || host.charCodeAt(host.length - 1) === 0x2e || host.includes('..') || host.includes('xn--'))
    return undefined;
  const lastDot = host.lastIndexOf('.');
  const last = host.charCodeAt(lastDot + 1);
  if (last >= 0x30 && last <= 0x39 && !isDottedQuad(host)) return undefined;
  return host;
}

/**
 * True for `a.b.c.d` where each part is a decimal number of 0 to 255 without a leading zero
 * (a loop over the characters: every link to a host named by its address passes here).
 */
function isDottedQuad(host: string): boolean {
  let parts = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= host.length; i++) {
    const c = i < host.length ? host.charCodeAt(i) : 0x2e;
    if (c === 0x2e) {
      if (digits === 0 || value > 255 || ++parts > 4) return false;
      value = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      if (digits === 1 && value === 0) return false; // a leading zero
      value = value * 10 + (c - 0x30);
      if (++digits > 3) return false;
    } else {
      return false;
    }
  }
  return parts === 4;
}

/**
 * The path `href[from, to)` (absolute when `dir` is '', else relative to the directory
 * `dir`), or undefined when it holds a character this fast path does not handle, a
 * percent-encoded dot (`%2e` is a dot segment in WHATWG), for a relative path a colon (`a:b`
 * may be a scheme), or a segment that starts with a dot anywhere but in leading `./` and
 * `../` of a relative path. Node's URL parser (ada) leaves some paths with such segments
 * unresolved (`/a/.b/..` stays as it is, while `/a/b/..` gives `/a/`), and keys follow what
 * it does, so those take the slow path rather than a rule of our own.
 */
function cleanPath(href: string, from: number, to: number, dir: string): string | undefined {
  if (!allOf(href, from, to, PATH)) return undefined;
  let raw = href.slice(from, to);
  if (raw.includes('%') && /%2e/i.test(raw)) return undefined;
  if (dir === '') return raw.includes('/.') ? undefined : raw;
  if (raw.includes(':')) return undefined;
  let base = dir;
  // Leading `./` and `../`: the directory, and its parents.
  while (raw.charCodeAt(0) === 0x2e) {
    if (raw.startsWith('./')) raw = raw.slice(2);
    else if (raw.startsWith('../')) {
      raw = raw.slice(3);
      if (base.length > 1) base = base.slice(0, base.lastIndexOf('/', base.length - 2) + 1);
    } else return undefined;
  }
  return raw.includes('/.') ? undefined : base + raw;
}
