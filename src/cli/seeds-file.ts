import { readFileSync } from 'node:fs';
import { ExitCode, FatalError, badUrlError } from '../errors.js';
import { normalizeUrl, type NormalizeOptions, type NormalizeResult } from '../url/normalize.js';

/** One seed line of a seeds file: its URL text (comment and blanks removed) and line number. */
export interface SeedLine {
  readonly line: number;
  readonly text: string;
}

/**
 * The seed lines of a seeds file's text: blank lines and `#` comments are left out, whole
 * lines (`# note`) and the rest of a line after whitespace (`http://h/ # note`). A `#`
 * inside a URL (`http://h/#top`) is part of the URL.
 */
export function seedLines(text: string): SeedLine[] {
  const out: SeedLine[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const withoutComment = raw.trimStart().startsWith('#') ? '' : raw.replace(/\s+#.*$/, '');
    const t = withoutComment.trim();
    if (t !== '') out.push({ line: i + 1, text: t });
  });
  return out;
}

/**
 * Why a URL cannot be a seed, in words, with a hint when it looks like a host without its
 * scheme (`127.0.0.5:8000`, `example.com/a`): "did you mean http://127.0.0.5:8000/?".
 */
export function whyNotASeed(raw: string, reason: Exclude<NormalizeResult, { ok: true }>['reason'], maxUrlLength: number): string {
  const why = {
    invalid: 'not a valid absolute URL',
    scheme: 'only http and https URLs can be crawled',
    'too-long': `longer than --max-url-length ${maxUrlLength}`,
    'unsafe-host': 'its host name cannot be used as a directory name',
  }[reason];
  if ((reason === 'invalid' || reason === 'scheme') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    const guess = normalizeUrl(`http://${raw}`);
    if (guess.ok) return `${why} (did you mean ${guess.url}?)`;
  }
  return why;
}

/** Normalizes a seed given on the command line, or throws BAD_URL with the reason (and a hint). */
export function seedOrFail(raw: string, normalize: NormalizeOptions & { maxUrlLength: number }): string {
  const r = normalizeUrl(raw, undefined, normalize);
  if (!r.ok) throw badUrlError(raw, whyNotASeed(raw, r.reason, normalize.maxUrlLength));
  return r.url;
}

/**
 * Reads `--seeds-file`: every good line becomes a seed; a bad line is reported through `warn`
 * with the file name and line number and skipped, and the crawl goes on with the others.
 * Throws BAD_SEEDS_FILE when the file cannot be read, or when it has lines and none is good.
 */
export function readSeedsFile(
  path: string,
  normalize: NormalizeOptions & { maxUrlLength: number },
  warn: (line: string) => void,
): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new FatalError('BAD_SEEDS_FILE', `cannot read --seeds-file ${path}: ${(err as Error).message}`, ExitCode.USAGE);
  }
  const lines = seedLines(text);
  const urls: string[] = [];
  for (const { line, text: raw } of lines) {
    const r = normalizeUrl(raw, undefined, normalize);
    if (r.ok) urls.push(r.url);
    else warn(`${path}:${line}: ${JSON.stringify(raw.slice(0, 200))}: ${whyNotASeed(raw, r.reason, normalize.maxUrlLength)}; skipped`);
  }
  if (urls.length === 0 && lines.length > 0) {
    throw new FatalError('BAD_SEEDS_FILE', `${path}: none of its ${lines.length} lines is a URL that can be crawled`, ExitCode.USAGE);
  }
  return urls;
}
