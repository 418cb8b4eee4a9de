import { existsSync } from 'node:fs';
import { DEFAULT_NORMALIZE_OPTIONS, normalizeUrl } from '../url/normalize.js';
import { badUrlError } from '../errors.js';
import { urlKey } from '../url/key.js';
import { Layout } from '../store/layout.js';

/** Normalizes a URL the way the crawler does, or throws BAD_URL. */
export function normalizeOrFail(raw: string): { url: string; hostDir: string; key: string } {
  const r = normalizeUrl(raw, undefined, DEFAULT_NORMALIZE_OPTIONS);
  if (!r.ok) throw badUrlError(raw, `cannot be crawled (${r.reason})`);
  return { url: r.url, hostDir: r.hostDir, key: urlKey(r.url) };
}

/** `mountcrawl key URL`: the normalized URL and its key, tab-separated. */
export function keyCommand(raw: string, out: (line: string) => void): number {
  const { url, key } = normalizeOrFail(raw);
  out(`${key}\t${url}`);
  return 0;
}

/** `mountcrawl locate URL`: where the URL's files are and whether each exists. */
export function locateCommand(raw: string, dataDir: string, json: boolean, out: (line: string) => void): number {
  const { url, hostDir, key } = normalizeOrFail(raw);
  const layout = new Layout(dataDir);
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
