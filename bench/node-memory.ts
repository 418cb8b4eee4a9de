/**
 * The peak RSS of a whole crawling node that knows 1,000,000 URLs (issue 13: "a node holding
 * 1,000,000 known URLs at most 1 GB; measure a whole node, not only the reseeder").
 *
 *   node dist/bench/node-memory.js [--records 1000000] [--hosts 100] [--links 40] [--data DIR] [--keep]
 *
 * A loopback site of `--hosts` hosts (127.0.0.10 and up) answers robots.txt with 404 and
 * every page with a small page without links. The bench writes `--records` links records of
 * those hosts into a fresh data directory, as nodes would have left them (host-major, real
 * field set and serialization; links to pages of the same host and of others, all of them
 * pages that have a record; bench/synthetic-crawl.ts), then runs `node bin/mountcrawl.js crawl` on it as a user resumes
 * a crawl: seeded with each host's `/`, the node takes every host, lists its records (each
 * key a URL it knows as done), reseeds from all of them (each link offered and found known),
 * fetches the 100 seeds and ends. Its peak RSS is measured with GNU time.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LoopbackSite } from '../src/site/site-server.js';
import { Layout } from '../src/store/layout.js';
import { benchArgs } from './args.js';
import { haveGnuTime, wholeArg } from './measure.js';
import { MOUNTCRAWL_BIN } from './peers.js';
import { writeSyntheticCrawl } from './synthetic-crawl.js';

const { values: o } = benchArgs({
  options: {
    records: { type: 'string', default: '1000000' },
    hosts: { type: 'string', default: '100' },
    links: { type: 'string', default: '40' },
    data: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const log = (line: string): void => void process.stderr.write(`node-memory bench: ${line}\n`);
const records = wholeArg('node-memory bench', 'records', o.records, 1);
const hostCount = wholeArg('node-memory bench', 'hosts', o.hosts, 1);
const linksPerRecord = wholeArg('node-memory bench', 'links', o.links, 0);
if (!haveGnuTime()) {
  log('needs GNU time (/usr/bin/time) to measure the peak RSS');
  process.exit(2);
}

const site = await LoopbackSite.start({
  hosts: hostCount,
  firstOctet: 10,
  handle: (_req, res, _host, path) => {
    if (path === '/robots.txt') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>seed</title><p>no links here</p>');
  },
});
const root = o.data !== undefined ? resolve(o.data) : await mkdtemp(join(tmpdir(), 'mountcrawl-node-memory-'));
try {
  await writeSyntheticCrawl({ layout: new Layout(root), hosts: site.hosts, records, links: linksPerRecord, log });
  log('crawling');

  const timeFile = join(root, '..', `node-memory-${process.pid}.time`);
  const args = ['crawl', ...site.hosts.map((h) => `${h.origin}/`), '--data', root, '--no-progress', '--delay', '0'];
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%e %U %S %M', '-o', timeFile, process.execPath, MOUNTCRAWL_BIN, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  const wall = (performance.now() - started) / 1000;
  const [, user, sys, maxKiB] = (await readFile(timeFile, 'utf8')).trim().split(/\s+/).map(Number);
  await rm(timeFile, { force: true });
  const summary = stderr
    .split('\n')
    .filter((l) => /done|total|error/i.test(l))
    .slice(-3)
    .join(' | ');
  const requests = [...site.counts.values()].reduce((a, b) => a + b, 0);
  log(
    `exit ${code}, ${wall.toFixed(1)} s, CPU ${(user! + sys!).toFixed(1)} s, peak RSS ${(maxKiB! / 1024).toFixed(0)} MiB; requests to the site: ${requests}`,
  );
  log(`the node said: ${summary}`);
  const result = {
    records,
    hosts: hostCount,
    links: linksPerRecord,
    exit: code,
    wallS: wall,
    cpuS: user! + sys!,
    peakRssMiB: maxKiB! / 1024,
    requests,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await site.close();
  if (!o.keep) await rm(root, { recursive: true, force: true });
}
