/**
 * `npm run bench:nodes` (issue 4): 1, 2 and 3 mountcrawl nodes, each a separate `crawl`
 * process with its own --node-id, on one local data directory, against the bench site with a
 * small delay per response. Prints wall time, coverage, duplicate requests and the most
 * requests in flight on one host, all counted by the site.
 *
 *   node dist/bench/nodes.js [--hosts 20] [--pages 250] [--latency 5] [--per-host 4]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { round, wholeArg } from './measure.js';
import { MOUNTCRAWL_BIN } from './peers.js';
import { BenchSite } from './site.js';
import { benchArgs } from './args.js';

const { values: o } = benchArgs({
  options: {
    hosts: { type: 'string', default: '20' },
    pages: { type: 'string', default: '250' },
    latency: { type: 'string', default: '5' },
    'per-host': { type: 'string', default: '4' },
  },
});

const num = (name: keyof typeof o, min: number): number => wholeArg('nodes bench', name, o[name], min);
const perHost = num('per-host', 1);
const site = await BenchSite.start({ hosts: num('hosts', 1), pagesPerHost: num('pages', 1), latencyMs: num('latency', 0) });
const crawl = (id: string, data: string): Promise<number | null> =>
  new Promise((resolve) => {
    const args = [
      MOUNTCRAWL_BIN,
      'crawl',
      ...site.seeds(),
      '--data',
      data,
      '--node-id',
      id,
      '--per-host',
      String(perHost),
      '--delay',
      '0',
      '--no-progress',
    ];
    spawn(process.execPath, args, { stdio: 'ignore' }).on('exit', resolve);
  });
process.stdout.write(
  '| nodes | wall s | coverage | duplicate requests | robots.txt requests | max in flight/host | exit codes |\n| --- | --- | --- | --- | --- | --- | --- |\n',
);
try {
  for (const n of [1, 2, 3]) {
    const data = await mkdtemp(join(tmpdir(), 'mountcrawl-nodes-bench-'));
    site.reset();
    const started = performance.now();
    const codes = await Promise.all(Array.from({ length: n }, (_, i) => crawl(`bench-${i + 1}`, data)));
    const seconds = (performance.now() - started) / 1000;
    const c = site.counts();
    process.stdout.write(
      `| ${n} | ${round(seconds, 2)} | ${round(c.pagesFetched / c.pages, 4)} | ${c.duplicateRequests} | ${c.robotsRequests} | ${c.maxInFlightPerHost} | ${codes.join(', ')} |\n`,
    );
    await rm(data, { recursive: true, force: true });
  }
} finally {
  await site.close();
}
