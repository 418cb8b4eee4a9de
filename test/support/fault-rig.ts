import { join } from 'node:path';
import { after, afterEach, before, beforeEach } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { listFiles } from './data-files.js';
import { tempDir } from './cli.js';
import { Tmpfs } from './tmpfs.js';

/** What a fault test works with; `fs`, `data` and `skip` are fresh for each test. */
export interface FaultRig {
  readonly site: LoopbackSite;
  /** The root page of every host of the site. */
  readonly seeds: string[];
  /** A 64 MiB tmpfs mounted for this test: fill it (`remount('size=...')`) or turn it read-only. */
  readonly fs: Tmpfs;
  /** The data directory, inside the tmpfs (not created: the crawl makes it). */
  readonly data: string;
  /** Why the tmpfs could not be mounted (not root): the test must skip with it. */
  readonly skip: string | undefined;
}

/**
 * The rig of the tests of a failing data directory (test/e2e/mount-faults.test.ts,
 * warc-faults.test.ts), registered in the calling describe(): a generated site of `hosts` x
 * `pagesPerHost` pages for the suite, and before each test a new tmpfs with the data
 * directory inside it, unmounted after the test. The site's request counts start at zero
 * in each test.
 */
export function useFaultRig(options: { hosts: number; pagesPerHost: number }): FaultRig {
  let site: LoopbackSite | undefined;
  let tmp: { path: string; cleanup: () => Promise<void> } | undefined;
  let fs: Tmpfs | undefined;
  let skip: string | undefined;
  let n = 0;
  before(async () => {
    site = await startGeneratedSite({ hosts: options.hosts, pagesPerHost: options.pagesPerHost, linksPerPage: 3, latencyMs: 15 });
    tmp = await tempDir();
  });
  after(async () => {
    await site?.close();
    await tmp?.cleanup();
  });
  beforeEach(async () => {
    fs = new Tmpfs(join(tmp!.path, `mnt-${n++}`));
    skip = await fs.mount(64 * 1024);
    site!.counts.clear();
  });
  afterEach(() => {
    if (skip === undefined) fs?.unmount();
  });
  return {
    get site() {
      return site!;
    },
    get seeds() {
      return site!.hosts.map((h) => `${h.origin}/`);
    },
    get fs() {
      return fs!;
    },
    get data() {
      return join(fs!.path, 'data');
    },
    get skip() {
      return skip;
    },
  };
}

/** The links and errs records a reader can see (temporary names aside), relative paths. */
export async function visibleRecords(data: string, kinds: RegExp = /^(links|errs)\//): Promise<string[]> {
  return (await listFiles(data).catch(() => [])).filter((f) => kinds.test(f) && !f.split('/').pop()!.startsWith('.'));
}

/** The error lines a node printed (warnings aside). */
export function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('mountcrawl: ') && !l.startsWith('mountcrawl: warning:'));
}
