import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseWarcFile } from './warc-check.js';

/**
 * Politeness is measured on the times the crawler itself logged, never on the test site's
 * arrival times: a request arrives at the site some time after the crawler started it, and on
 * a loaded machine that time varies by hundreds of milliseconds (a connect, a site whose event
 * loop is busy), so the gap between two arrivals can be shorter than the gap the crawler kept.
 *
 * With `--warc` the crawler writes a request record per request it sent, whose WARC-Date is
 * the time the fetcher started it (src/fetch/fetcher.ts), ms precision. The host's politeness
 * counts its gap from the moment the request pipeline hands the request to the fetcher
 * (`sending` in src/request/pipeline.ts), a few synchronous steps before that time is taken,
 * so a logged gap is the kept gap within CLOCK_TOLERANCE_MS, however slow the machine: the
 * tolerance is for those few steps (and a clock's ms rounding), not for load.
 */
export const CLOCK_TOLERANCE_MS = 50;

/** Request start times (ms since the epoch, sorted) the crawler logged for URLs under `origin`. */
export async function loggedStarts(dataDir: string, origin: string, filter: (path: string) => boolean = () => true): Promise<number[]> {
  const dir = join(dataDir, 'warc');
  const out: number[] = [];
  for (const name of (await readdir(dir)).filter((n) => /\.warc\.gz(\.open)?$/.test(n))) {
    for (const r of parseWarcFile(await readFile(join(dir, name))).records) {
      const uri = r.headers.get('warc-target-uri') ?? '';
      if (r.headers.get('warc-type') !== 'request' || !uri.startsWith(`${origin}/`) || !filter(uri.slice(origin.length))) continue;
      out.push(Date.parse(r.headers.get('warc-date')!));
    }
  }
  return out.sort((a, b) => a - b);
}
