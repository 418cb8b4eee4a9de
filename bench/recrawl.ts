/**
 * A recrawl of a 10,000-page site (issue 10, docs/recrawl.md): a first pass, then a second
 * pass with --recrawl-after 0s after 10% of the pages changed. For each pass: requests,
 * 304 answers, body bytes sent by the site, pages per second, and the crawler's CPU seconds
 * (its own summary: process.cpuUsage of the node) per page. The machine's load average and
 * CPU count are printed with them: wall-clock rates on a shared machine are the CPU share
 * the crawler got.
 *
 *   node dist/bench/recrawl.js [--pages 10000] [--changed 0.1] [--data DIR] [--keep]
 *
 * The site runs in this process on loopback (src/site/site-server.ts); the crawler is the
 * real CLI in a child process. Pages form a tree (each links to ten children) so that every
 * page is within --max-depth; even pages send an ETag, odd ones a Last-Modified, page 0
 * neither (its revisit is judged by its content signature).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LoopbackSite } from '../src/site/site-server.js';
import { benchArgs } from './args.js';

const BIN = fileURLToPath(new URL('../../bin/mountcrawl.js', import.meta.url));

const { values: o } = benchArgs({
  options: {
    pages: { type: 'string', default: '10000' },
    changed: { type: 'string', default: '0.1' },
    data: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const PAGES = Number(o.pages);
const CHANGED = Number(o.changed);
const CRAWL_OPTIONS = ['--delay', '0', '--per-host', '8', '--concurrency', '16', '--no-progress', '--json', '--recrawl-after', '0s'];

/** What the site saw. */
const seen = { requests: 0, notModified: 0, bodyBytes: 0 };
const versions = new Array<number>(PAGES).fill(0);

function body(i: number): Buffer {
  const links = Array.from({ length: 10 }, (_, k) => 10 * i + 1 + k).filter((n) => n < PAGES);
  return Buffer.from(
    `<!DOCTYPE html><html><head><title>page ${i} v${versions[i]}</title></head><body>${links
      .map((n) => `<a href="/p/${n}">page ${n}</a>`)
      .join('\n')}<p>${`page ${i} version ${versions[i]}. `.repeat(120)}</p></body></html>`,
  );
}

async function crawl(seed: string, data: string): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, [BIN, 'crawl', seed, '--data', data, ...CRAWL_OPTIONS], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const summary = err
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg === 'summary');
  if (code !== 0 || summary === undefined) throw new Error(`crawl exited ${code}: ${err.slice(-2000)}`);
  return summary;
}

async function pass(name: string, seed: string, data: string): Promise<Record<string, unknown>> {
  const before = { ...seen };
  const load = loadavg()[0]!;
  const started = performance.now();
  const s = await crawl(seed, data);
  const seconds = (performance.now() - started) / 1000;
  const pages = Number(s.pages);
  const cpuSeconds = Number(s.cpuSeconds);
  return {
    pass: name,
    requests: seen.requests - before.requests,
    notModified: seen.notModified - before.notModified,
    bodyBytes: seen.bodyBytes - before.bodyBytes,
    pages,
    wallSeconds: Number(seconds.toFixed(1)),
    pagesPerSecond: Math.round(pages / seconds),
    crawlerCpuSeconds: cpuSeconds,
    cpuMsPerPage: Number(((cpuSeconds * 1000) / pages).toFixed(2)),
    // Of which: reading the mount for work (reseeds: every links record of a new run).
    discovery: s.discovery,
    loadAverage1mAtStart: Number(load.toFixed(2)),
  };
}

const site = await LoopbackSite.start({
  hosts: 1,
  handle: (req, res, _host, path) => {
    seen.requests++;
    const m = /^\/p\/(\d+)$/.exec(path);
    const i = m === null ? -1 : Number(m[1]);
    if (i < 0 || i >= PAGES) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return void res.end();
    }
    const b = body(i);
    const validators: Record<string, string> = {};
    if (i > 0 && i % 2 === 0) validators.etag = `"${createHash('md5').update(b).digest('hex')}"`;
    if (i % 2 === 1) validators['last-modified'] = new Date(Date.UTC(2026, 0, 1) + versions[i]! * 86_400_000).toUTCString();
    const fresh =
      (validators.etag !== undefined && req.headers['if-none-match'] === validators.etag) ||
      (validators['last-modified'] !== undefined && req.headers['if-modified-since'] === validators['last-modified']);
    if (fresh) {
      seen.notModified++;
      res.writeHead(304, validators);
      return void res.end();
    }
    seen.bodyBytes += b.length;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': b.length, ...validators });
    res.end(b);
  },
});
const data = o.data ?? (await mkdtemp(join(tmpdir(), 'mountcrawl-bench-recrawl-')));
try {
  const seed = site.url(0, '/p/0');
  const first = await pass('first', seed, data);
  const step = Math.max(1, Math.round(1 / CHANGED));
  let bumped = 0;
  for (let i = 5 % step; i < PAGES; i += step, bumped++) versions[i]!++;
  const second = await pass('second', seed, data);
  const ratio = Number(second.bodyBytes) / Number(first.bodyBytes);
  console.log(
    JSON.stringify(
      {
        pages: PAGES,
        changedPages: bumped,
        cpus: cpus().length,
        loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
        command: `node dist/bench/recrawl.js --pages ${PAGES} --changed ${CHANGED}`,
        crawlOptions: CRAWL_OPTIONS.join(' '),
        first,
        second,
        secondBytesOfFirst: Number(ratio.toFixed(3)),
      },
      null,
      2,
    ),
  );
} finally {
  await site.close();
  if (!o.keep && o.data === undefined) await rm(data, { recursive: true, force: true });
}
