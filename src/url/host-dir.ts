/**
 * The `<host>` directory name of a URL (docs/url-keys.md): the lowercase, punycode host name, plus
 * `_<port>` when the port is not the scheme's default. Part of the on-disk contract
 * (docs/url-keys.md). Nothing from a URL reaches a path without passing `isSafeHostDir`.
 */

/**
 * Longest host directory name. File systems allow 255 bytes per name, but the name also goes
 * into `hosts/<host>.lease` and into temporary names (`.<host>.lease~<node id>~<seq>.tmp`,
 * node ids up to 64 characters), which must fit too.
 */
export const MAX_HOST_DIR_LENGTH = 160;

const DOMAIN_OR_IPV4 = /^[a-z0-9_-][a-z0-9._-]*$/;
const PORT_SUFFIX = /_[0-9]{1,5}$/;
const IPV6_DIR = /^\[[0-9a-f.-]+\]$/;

/**
 * Host directory of a URL string that is already normalized (as `normalizeUrl` returns it):
 * `http://Example.com:8080/x` is never passed here, `http://example.com:8080/x` gives
 * `example.com_8080`. IPv6 literals keep their brackets with `:` turned into `-`
 * (`[::1]:8080` gives `[--1]_8080`). Returns undefined when the result would not be a safe
 * directory name.
 */
export function hostDirOfNormalized(normalizedUrl: string): string | undefined {
  // Most links of a page are to the host of the one before: `scheme://authority/` as a prefix
  // says so without cutting the authority out and looking it up.
  if (lastPrefix !== '' && normalizedUrl.startsWith(lastPrefix)) return lastDir;
  const start = normalizedUrl.indexOf('://');
  if (start < 0) return undefined;
  const from = start + 3;
  let end = normalizedUrl.indexOf('/', from);
  if (end < 0) end = normalizedUrl.length;
  const authority = normalizedUrl.slice(from, end);
  // Reseeds ask this for every link of every record, mostly of a few hosts: remember them.
  let dir = recentDirs.get(authority);
  if (dir === undefined && !recentDirs.has(authority)) {
    dir = hostDirOfAuthority(authority);
    if (recentDirs.size >= RECENT_DIRS_MAX) recentDirs.clear();
    recentDirs.set(authority, dir);
  }
  if (end < normalizedUrl.length) {
    lastPrefix = normalizedUrl.slice(0, end + 1);
    lastDir = dir;
  }
  return dir;
}

/** `scheme://authority/` of the last URL with a path, and its host directory. */
let lastPrefix = '';
let lastDir: string | undefined;

/** Authorities seen lately and their host directories (or undefined: unsafe). */
const recentDirs = new Map<string, string | undefined>();
const RECENT_DIRS_MAX = 10_000;

/** Host directory of a `host[:port]` authority (no user info), or undefined if unsafe. */
export function hostDirOfAuthority(authority: string): string | undefined {
  let host = authority;
  let port = '';
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return undefined;
    if (close + 1 < host.length) {
      if (host[close + 1] !== ':') return undefined;
      port = host.slice(close + 2);
    }
    host = host.slice(0, close + 1).replaceAll(':', '-');
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0) {
      port = host.slice(colon + 1);
      host = host.slice(0, colon);
    }
  }
  if (port !== '' && !/^[0-9]{1,5}$/.test(port)) return undefined;
  // `a_8080` as a host name would share the directory of `a:8080`: such names are refused.
  if (PORT_SUFFIX.test(host)) return undefined;
  const dir = port === '' ? host : `${host}_${port}`;
  return isSafeHostDir(dir) ? dir : undefined;
}

/**
 * True when `dir` can be used as one path component under html/, links/, errs/, hosts/ and
 * robots/: only `[a-z0-9._-]` (or a bracketed IPv6 form), no leading dot (so never `.`,
 * `..` or a hidden name), no `/` or NUL, at most MAX_HOST_DIR_LENGTH (160) bytes.
 */
export function isSafeHostDir(dir: string): boolean {
  if (dir.length === 0 || dir.length > MAX_HOST_DIR_LENGTH) return false;
  const underscore = dir.lastIndexOf('_');
  const host = underscore > 0 && /^_[0-9]{1,5}$/.test(dir.slice(underscore)) ? dir.slice(0, underscore) : dir;
  return DOMAIN_OR_IPV4.test(host) || IPV6_DIR.test(host);
}
