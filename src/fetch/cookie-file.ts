import { readFileSync } from 'node:fs';
import { ExitCode, FatalError } from '../errors.js';

/** One cookie of a Netscape cookies.txt file. */
export interface FileCookie {
  /** Host name, without a leading dot. */
  readonly domain: string;
  /** True: also sent to subdomains (the file's second field, or a leading dot). */
  readonly subdomains: boolean;
  readonly path: string;
  /** Only over https. */
  readonly secure: boolean;
  /** Unix seconds; 0: a session cookie (always sent). */
  readonly expires: number;
  readonly name: string;
  readonly value: string;
}

/**
 * Parses a Netscape cookies.txt (as curl `-b`/`-c` and wget `--load-cookies` read and write
 * it): seven tab-separated fields per line (domain, include subdomains TRUE/FALSE, path,
 * secure TRUE/FALSE, expiry in Unix seconds, name, value); `#` lines are comments, except
 * `#HttpOnly_` which prefixes the domain of an HttpOnly cookie. Throws BAD_OPTION naming
 * FILE:LINE for a line that does not parse.
 */
export function parseCookieFile(text: string, file: string): FileCookie[] {
  const out: FileCookie[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    let line = raw;
    if (line.startsWith('#HttpOnly_')) line = line.slice('#HttpOnly_'.length);
    else if (line.startsWith('#') || line.trim() === '') return;
    const f = line.split('\t');
    const expires = Number(f[4]);
    if (f.length < 7 || f[0] === '' || !Number.isFinite(expires)) {
      throw new FatalError(
        'BAD_OPTION',
        `--cookie-file ${file}:${i + 1}: not a Netscape cookies.txt line (7 tab-separated fields)`,
        ExitCode.USAGE,
      );
    }
    out.push({
      domain: f[0]!.replace(/^\./, '').toLowerCase(),
      subdomains: f[1]!.toUpperCase() === 'TRUE' || f[0]!.startsWith('.'),
      path: f[2] || '/',
      secure: f[3]!.toUpperCase() === 'TRUE',
      expires,
      name: f[5]!,
      value: f.slice(6).join('\t'),
    });
  });
  return out;
}

/** Reads and parses --cookie-file; throws BAD_OPTION with one line when it cannot. */
export function readCookieFile(file: string): FileCookie[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new FatalError('BAD_OPTION', `--cookie-file ${file}: ${(err as Error).message}`, ExitCode.USAGE);
  }
  return parseCookieFile(text, file);
}

/**
 * The `Cookie` header value for `url` (RFC 6265 §5.4: domain and path match, secure only over
 * https, expired cookies left out), or undefined when no cookie applies.
 */
export function cookieHeader(cookies: readonly FileCookie[], url: URL, nowSeconds: number): string | undefined {
  const host = url.hostname.toLowerCase();
  const path = url.pathname || '/';
  const pairs: string[] = [];
  for (const c of cookies) {
    if (c.expires !== 0 && c.expires <= nowSeconds) continue;
    if (c.secure && url.protocol !== 'https:') continue;
    if (host !== c.domain && !(c.subdomains && host.endsWith(`.${c.domain}`))) continue;
    if (!(path === c.path || (path.startsWith(c.path) && (c.path.endsWith('/') || path[c.path.length] === '/')))) continue;
    pairs.push(`${c.name}=${c.value}`);
  }
  return pairs.length === 0 ? undefined : pairs.join('; ');
}
