import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { urlKey } from '../../src/url/key.js';
import { normalizeUrl } from '../../src/url/normalize.js';

/** Every file under `dir`, relative paths, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(join(d, e.name), r);
      else out.push(r);
    }
  };
  await walk(dir, '');
  return out.sort();
}

/** The files of a URL in a data directory, as paths relative to it. */
export function filesOf(url: string): { html: string; links: string; errs: string; key: string; hostDir: string } {
  const r = normalizeUrl(url);
  if (!r.ok) throw new Error(`not a crawlable URL: ${url}`);
  const key = urlKey(r.url);
  return {
    key,
    hostDir: r.hostDir,
    html: `html/${r.hostDir}/${key}.html`,
    links: `links/${r.hostDir}/${key}.json`,
    errs: `errs/${r.hostDir}/${key}.json`,
  };
}

/** Reads and parses a JSON file of the data directory. */
export async function readJson<T = Record<string, unknown>>(data: string, rel: string): Promise<T> {
  return JSON.parse(await readFile(join(data, rel), 'utf8')) as T;
}

/** Names of temporary files (hidden, ending .tmp) anywhere under the record directories. */
export async function tempFiles(data: string): Promise<string[]> {
  return (await listFiles(data)).filter((f) => f.split('/').pop()!.endsWith('.tmp'));
}
