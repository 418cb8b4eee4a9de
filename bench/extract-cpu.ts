/**
 * CPU per page of link extraction (tag scanner, URL resolution and normalization, the
 * records' JSON), per page shape of the bench site (bench/pages.ts), in this process: no
 * network, no files, so the numbers hold still on a loaded machine better than a crawl's.
 *
 *   node dist/bench/extract-cpu.js [--pages 400] [--rounds 7] [--shapes standard,small,...]
 *
 * Prints one line per shape: the median and the best of the rounds' CPU time (user + system)
 * per page, links per page, and the load average when it ran. For a count that does not
 * depend on the load: `valgrind --tool=callgrind node dist/bench/extract-cpu.js --rounds 1`
 * (docs/benchmarks-log.md, "CPU per page of link extraction, per shape").
 */
import { loadavg } from 'node:os';
import { extractLinks } from '../src/extract/link-extractor.js';
import { serializeRecord, RECORD_VERSION } from '../src/store/records.js';
import { DEFAULT_NORMALIZE_OPTIONS } from '../src/url/normalize.js';
import { generatePage, PAGE_SHAPES, type PageShape, type SiteShape } from './pages.js';
import { benchArgs } from './args.js';

const { values: o } = benchArgs({
  options: {
    pages: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '7' },
    shapes: { type: 'string', default: ['mixed', ...PAGE_SHAPES].join(',') },
  },
});
const pages = Number(o.pages);
const rounds = Number(o.rounds);
const shapes = o.shapes!.split(',') as (PageShape | 'mixed')[];

const hosts = Array.from({ length: 20 }, (_, i) => ({
  index: i,
  origin: `http://127.0.0.${10 + i}:4${1000 + i}`,
  authority: `127.0.0.${10 + i}:4${1000 + i}`,
}));

for (const kind of shapes) {
  const site: SiteShape = {
    hosts,
    pagesPerHost: 500,
    external: ['http://127.0.0.200:40001', 'http://127.0.0.201:40002', 'http://127.0.0.202:40003'],
    pages: kind,
  };
  const bodies = Array.from({ length: pages }, (_, i) => {
    const p = generatePage(site, i % hosts.length, i % 500);
    return { url: `${hosts[i % hosts.length]!.origin}${p.path}`, body: p.body };
  });
  const perPage: number[] = [];
  let links = 0;
  for (let round = 0; round < rounds; round++) {
    links = 0;
    const cpu = process.cpuUsage();
    for (const { url, body } of bodies) {
      const r = extractLinks(body, url, 'text/html; charset=utf-8', false, DEFAULT_NORMALIZE_OPTIONS);
      links += r.links.length;
      // What the committer writes for the page: the links record's JSON.
      serializeRecord({
        v: RECORD_VERSION,
        url,
        finalUrl: url,
        status: 200,
        contentType: 'text/html; charset=utf-8',
        bytes: body.length,
        fetchedAt: new Date(0).toISOString(),
        depth: 1,
        node: 'bench',
        durationMs: 1,
        html: 'html/x/y.html',
        charset: r.charset,
        links: r.links,
      });
    }
    const used = process.cpuUsage(cpu);
    perPage.push((used.user + used.system) / pages);
  }
  perPage.sort((a, b) => a - b);
  const kb = bodies.reduce((n, b) => n + b.body.length, 0) / pages / 1024;
  process.stdout.write(
    `${kind.padEnd(10)} ${kb.toFixed(1).padStart(6)} KiB ${(links / pages).toFixed(0).padStart(4)} links  ` +
      `median ${perPage[perPage.length >> 1]!.toFixed(0).padStart(5)} us/page  best ${perPage[0]!.toFixed(0).padStart(5)}  (load ${loadavg()[0]!.toFixed(2)})\n`,
  );
}
