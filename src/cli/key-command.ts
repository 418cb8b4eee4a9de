import { existsSync } from 'node:fs';
import { badUrlError } from '../errors.js';
import { whyNotASeed } from './seeds-file.js';
import { openExistingDataDir, readMarker } from '../store/data-dir.js';
import { Layout } from '../store/layout.js';
import { urlKey } from '../url/key.js';
import { DEFAULT_NORMALIZE_OPTIONS, normalizeUrl, type NormalizeOptions } from '../url/normalize.js';

/**
 * The normalization of a data directory (recorded in its marker when it was created), or
 * the defaults when there is no data directory there.
 */
export async function normalizationOf(dataDir: string | undefined): Promise<NormalizeOptions> {
  if (dataDir === undefined) return DEFAULT_NORMALIZE_OPTIONS;
  const marker = await readMarker(new Layout(dataDir)).catch(() => undefined);
  const params = marker?.normalization?.sessionParams;
  return params === undefined ? DEFAULT_NORMALIZE_OPTIONS : { ...DEFAULT_NORMALIZE_OPTIONS, sessionParams: new Set(params) };
}

/** Normalizes a URL the way the crawler does, or throws BAD_URL. */
export function normalizeOrFail(
  raw: string,
  options: NormalizeOptions = DEFAULT_NORMALIZE_OPTIONS,
): { url: string; hostDir: string; key: string } {
  const r = normalizeUrl(raw, undefined, options);
  // The words `crawl` gives for a seed that cannot be crawled, hint included.
  if (!r.ok) throw badUrlError(raw, whyNotASeed(raw, r.reason, options.maxUrlLength));
  return { url: r.url, hostDir: r.hostDir, key: urlKey(r.url) };
}

/** `mountcrawl key URL`: the key and the normalized URL, tab-separated. */
export async function keyCommand(raw: string, dataDir: string | undefined, out: (line: string) => void): Promise<number> {
  const { url, key } = normalizeOrFail(raw, await normalizationOf(dataDir));
  out(`${key}\t${url}`);
  return 0;
}

/** `mountcrawl locate URL`: where the URL's files are and whether each exists. */
export async function locateCommand(raw: string, dataDir: string, json: boolean, out: (line: string) => void): Promise<number> {
  const layout = await openExistingDataDir(dataDir);
  const { url, hostDir, key } = normalizeOrFail(raw, await normalizationOf(dataDir));
  const files = {
    html: layout.html(hostDir, key),
    links: layout.links(hostDir, key),
    errs: layout.errs(hostDir, key),
  };
  const exists = Object.fromEntries(Object.entries(files).map(([k, p]) => [k, existsSync(p)]));
  if (json) {
    out(JSON.stringify({ url, key, host: hostDir, files, exists }));
    return 0;
  }
  out(`url   ${url}`);
  out(`key   ${key}`);
  for (const [kind, path] of Object.entries(files)) {
    out(`${kind.padEnd(5)} ${path}  ${exists[kind] ? 'exists' : 'missing'}`);
  }
  return 0;
}
