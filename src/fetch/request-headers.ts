import { ExitCode, FatalError } from '../errors.js';

/**
 * The headers every request starts with: the user agent and what we accept. The fetch
 * middleware's first step sets them (src/hooks/builtin-steps.ts), where hooks see them.
 */
export function defaultRequestHeaders(userAgent: string): Record<string, string> {
  return { 'user-agent': userAgent, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5', 'accept-encoding': 'gzip, deflate, br' };
}

/** An HTTP header name (RFC 9110 §5.1: a token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Headers the crawler sets itself: giving them with --header would break what it relies on. */
const OWN = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'accept-encoding',
  'if-none-match',
  'if-modified-since',
  'cookie',
  'user-agent',
]);

/**
 * Parses one `--header 'Name: value'`. Throws BAD_OPTION for a malformed one, or one the
 * crawler sets itself (User-Agent: use --user-agent, which robots.txt is matched against;
 * Cookie: use --cookie-file).
 */
export function parseHeaderOption(raw: string): readonly [string, string] {
  const colon = raw.indexOf(':');
  const name = colon < 0 ? '' : raw.slice(0, colon).trim();
  const value = colon < 0 ? '' : raw.slice(colon + 1).trim();
  if (!TOKEN.test(name) || /[\r\n\0]/.test(value)) {
    throw new FatalError('BAD_OPTION', `--header ${JSON.stringify(raw)}: expected 'Name: value'`, ExitCode.USAGE);
  }
  const lower = name.toLowerCase();
  if (OWN.has(lower)) {
    const instead =
      lower === 'user-agent' ? ' (use --user-agent: robots.txt is matched against it)' : lower === 'cookie' ? ' (use --cookie-file)' : '';
    throw new FatalError('BAD_OPTION', `--header ${name}: mountcrawl sets this header itself${instead}`, ExitCode.USAGE);
  }
  return [lower, value];
}
