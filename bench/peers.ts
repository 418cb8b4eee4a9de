import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_MAX_BYTES } from './pages.js';
import type { BenchSite } from './site.js';

/** The crawlers the benchmark runs, in the order it runs them. */
export const PEERS = ['baseline', 'mountcrawl', 'wget', 'scrapy'] as const;
export type PeerName = (typeof PEERS)[number];

/** Settings shared by the peers (mountcrawl's are the reference). */
export interface PeerSettings {
  /** mountcrawl --processes. */
  readonly processes: number;
  /** Requests in flight per host: mountcrawl --per-host, Scrapy CONCURRENT_REQUESTS_PER_DOMAIN, the baseline's connections per origin. */
  readonly perHost: number;
  /** mountcrawl --concurrency (per process); the baseline and Scrapy get processes x this in all. */
  readonly concurrency: number;
  /** The Python that imports Scrapy. */
  readonly python?: string;
}

/** How to run one peer. */
export interface PeerCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Names the processes of its tree (see measure()). */
  readonly role: (depth: number, ordinal: number) => string;
  /** Requests in flight in all / per host this peer is configured for. */
  readonly concurrency: { readonly total: number; readonly perHost: number };
}

/** The repository root (this file is dist/bench/peers.js once built). */
export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const MOUNTCRAWL_BIN = join(REPO, 'bin', 'mountcrawl.js');
const BASELINE = fileURLToPath(new URL('./baseline.js', import.meta.url));

/**
 * Scrapy's side: a plain Spider with the default LinkExtractor (a and area hrefs), stores
 * each response body to a file as the others do, follows every extracted link. Offsite
 * filtering (allowed_domains), robots.txt, duplicates and concurrency are Scrapy's own.
 */
export const SCRAPY_SPIDER = `import hashlib
import os

import scrapy
from scrapy.linkextractors import LinkExtractor


class BenchSpider(scrapy.Spider):
    name = "bench"

    def __init__(self, seeds, domains, out, *args, **kwargs):
        super().__init__(*args, **kwargs)
        with open(seeds) as f:
            self.start_urls = [line.strip() for line in f if line.strip()]
        self.allowed_domains = domains.split(",")
        self.out = out
        self.link_extractor = LinkExtractor()

    def parse(self, response):
        host = response.url.split("/")[2].replace(":", "_")
        directory = os.path.join(self.out, host)
        os.makedirs(directory, exist_ok=True)
        name = hashlib.sha1(response.url.encode()).hexdigest() + ".html"
        with open(os.path.join(directory, name), "wb") as f:
            f.write(response.body)
        for link in self.link_extractor.extract_links(response):
            yield scrapy.Request(link.url, callback=self.parse)
`;

/**
 * The command line of a peer against `site`, with its files in `work` (`out/` is where it
 * stores pages). Writes what the peer needs (URL list, seeds, spider) into `work` first.
 */
export async function peerCommand(name: PeerName, site: BenchSite, settings: PeerSettings, work: string): Promise<PeerCommand> {
  const out = join(work, 'out');
  const total = settings.processes * settings.concurrency;
  const seeds = site.seeds();
  const addresses = site.hosts.map((h) => h.address).join(',');
  switch (name) {
    case 'baseline': {
      const urls = join(work, 'urls.txt');
      await writeFile(urls, `${site.pageUrls().join('\n')}\n`);
      return {
        command: process.execPath,
        args: [BASELINE, '--urls', urls, '--concurrency', String(total), '--per-host', String(settings.perHost)],
        role: () => 'baseline',
        concurrency: { total, perHost: settings.perHost },
      };
    }
    case 'mountcrawl':
      return {
        command: process.execPath,
        args: [
          MOUNTCRAWL_BIN,
          'crawl',
          ...seeds,
          '--data',
          out,
          '--processes',
          String(settings.processes),
          '--per-host',
          String(settings.perHost),
          '--delay',
          '0',
          '--concurrency',
          String(settings.concurrency),
          '--max-bytes',
          `${BENCH_MAX_BYTES / 1024}k`,
          '--no-progress',
        ],
        cwd: REPO,
        env: { ...process.env, MOUNTCRAWL_DATA: '' },
        role: (depth, ordinal) => (settings.processes === 1 ? 'node' : depth === 1 ? 'supervisor' : `node ${ordinal}`),
        concurrency: { total, perHost: settings.perHost },
      };
    case 'wget':
      // --domains matches host names without their ports (and wget keeps robots.txt per
      // host:port): the site's hosts differ by address, so the list of addresses is exact.
      // Assets (/static/: images, CSS, scripts) are rejected so that wget, like the others,
      // crawls pages only. wget gets one start URL: it runs a whole recursive retrieval per
      // start URL, and with the 20 home pages it spent about 45 s of CPU outside the crawl
      // itself (5.4 ms per page instead of 0.65, measured); every host is reachable from any
      // home page through the cross-host links, so one start URL reaches all 10,000 pages.
      return {
        command: 'wget',
        args: [
          '--recursive',
          '--level=inf',
          '--span-hosts',
          `--domains=${addresses}`,
          '-e',
          'robots=on',
          '--reject-regex=/static/',
          '--no-verbose',
          '--tries=3',
          '--timeout=30',
          '-P',
          out,
          seeds[0]!,
        ],
        role: () => 'wget',
        concurrency: { total: 1, perHost: 1 },
      };
    case 'scrapy': {
      const spider = join(work, 'bench_spider.py');
      const seedFile = join(work, 'seeds.txt');
      await writeFile(spider, SCRAPY_SPIDER);
      await writeFile(seedFile, `${seeds.join('\n')}\n`);
      const set = (k: string, v: string | number): string[] => ['-s', `${k}=${v}`];
      return {
        command: settings.python ?? 'python3',
        args: [
          '-m',
          'scrapy',
          'runspider',
          spider,
          ...set('CONCURRENT_REQUESTS', total),
          ...set('CONCURRENT_REQUESTS_PER_DOMAIN', settings.perHost),
          ...set('ROBOTSTXT_OBEY', 'True'),
          ...set('DOWNLOAD_DELAY', 0),
          ...set('LOG_LEVEL', 'WARNING'),
          ...set('TELNETCONSOLE_ENABLED', 'False'),
          ...set('REQUEST_FINGERPRINTER_IMPLEMENTATION', '2.7'),
          '-a',
          `seeds=${seedFile}`,
          '-a',
          `domains=${addresses}`,
          '-a',
          `out=${out}`,
        ],
        cwd: work,
        role: () => 'scrapy',
        concurrency: { total, perHost: settings.perHost },
      };
    }
  }
}
