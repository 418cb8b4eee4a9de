import { RECORD_VERSION, type LinksRecord } from '../src/store/records.js';
import { urlKey } from '../src/url/key.js';

/**
 * A links record as a node writes it (the real field set), for page `j` at `url` in host
 * directory `hostDir`, with `links`; its size and duration drawn from `r`. The record benches
 * (reseed, node-memory) build their data directories from it.
 */
export function benchLinksRecord(url: string, hostDir: string, j: number, links: readonly string[], r: () => number): LinksRecord {
  return {
    v: RECORD_VERSION,
    url,
    finalUrl: url,
    status: 200,
    contentType: 'text/html; charset=utf-8',
    bytes: 20_000 + Math.floor(r() * 20_000),
    fetchedAt: new Date(1_750_000_000_000 + j * 1000).toISOString(),
    depth: 1 + (j % 7),
    node: 'bench-1234',
    durationMs: 5 + Math.floor(r() * 200),
    html: `html/${hostDir}/${urlKey(url)}.html`,
    charset: 'utf-8',
    links: [...links],
  };
}
