/**
 * What one big sitemap costs a node in memory (docs/sitemaps.md, "Limits"): a loopback site
 * serves one urlset of `--entries` entries, each padded with an image caption of `--pad`
 * bytes (50,000 x 950: about 52 MB), and a crawl is given it with --sitemap and --exclude
 * /x/ so that only the sitemap is fetched. Prints the crawl's peak RSS and CPU from
 * /usr/bin/time -v; run it again with `--entries 10 --pad 10` for the baseline.
 *
 *   node dist/bench/sitemap-memory.js [--entries 50000] [--pad 950]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LoopbackSite } from '../src/site/site-server.js';
import { benchArgs } from './args.js';

const BIN = fileURLToPath(new URL('../../bin/mountcrawl.js', import.meta.url));
const { values: o } = benchArgs({ options: { entries: { type: 'string', default: '50000' }, pad: { type: 'string', default: '950' } } });
const entries = Number(o.entries);
const pad = Number(o.pad);

let big: Buffer | undefined;
const site = await LoopbackSite.start({
  hosts: 1,
  handle: (_req, res, host, path) => {
    if (path !== '/big.xml') {
      res.writeHead(404);
      return void res.end();
    }
    if (big === undefined) {
      const parts = [
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">',
      ];
      for (let i = 0; i < entries; i++) {
        parts.push(
          `<url><loc>${host.origin}/x/${i}</loc><lastmod>2026-01-01</lastmod><image:image><image:caption>${'c'.repeat(pad)}</image:caption></image:image></url>`,
        );
      }
      parts.push('</urlset>');
      big = Buffer.from(parts.join(''));
    }
    res.writeHead(200, { 'content-type': 'application/xml', 'content-length': big.length });
    res.end(big);
  },
});
const data = await mkdtemp(join(tmpdir(), 'mountcrawl-bench-sitemap-'));
try {
  const args = [
    '-v',
    process.execPath,
    BIN,
    'crawl',
    '--sitemap',
    site.url(0, '/big.xml'),
    '--data',
    data,
    '--exclude',
    '/x/',
    '--no-progress',
    '--delay',
    '0',
  ];
  const child = spawn('/usr/bin/time', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const field = (name: string): string | undefined => new RegExp(`${name}: (.*)`).exec(err)?.[1];
  console.log(
    JSON.stringify({
      entries,
      sitemapBytes: big?.length ?? 0,
      exitCode: code,
      peakRssMiB: Math.round(Number(field('Maximum resident set size \\(kbytes\\)')) / 1024),
      cpuSeconds: Number((Number(field('User time \\(seconds\\)')) + Number(field('System time \\(seconds\\)'))).toFixed(2)),
    }),
  );
} finally {
  await site.close();
  await rm(data, { recursive: true, force: true });
}
