/**
 * `npm run bench:warc` (issue 11): the cost of `crawl --warc` on the bench site (bench/site.ts,
 * the one `npm run bench` crawls). Runs mountcrawl without and with --warc, alternately,
 * --rounds times each (A B A B ...), so that both see the same load of a shared machine, and
 * prints pages/s and CPU ms per page of each run and the medians.
 *
 *   node dist/bench/warc-cost.js [--hosts 20] [--pages 250] [--rounds 3] [--processes 1] [--latency 0]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measure, wholeArg } from './measure.js';
import { MOUNTCRAWL_BIN } from './peers.js';
import { BenchSite } from './site.js';
import { benchArgs } from './args.js';

const { values: o } = benchArgs({
  options: {
    hosts: { type: 'string', default: '20' },
    pages: { type: 'string', default: '250' },
    rounds: { type: 'string', default: '3' },
    processes: { type: 'string', default: '1' },
    latency: { type: 'string', default: '0' },
  },
});
const whole = (name: string, v: string, min: number): number => wholeArg('bench:warc', name, v, min);
const hosts = whole('hosts', o.hosts!, 1);
const pagesPerHost = whole('pages', o.pages!, 1);
const rounds = whole('rounds', o.rounds!, 1);
const processes = whole('processes', o.processes!, 1);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const site = await BenchSite.start({ hosts, pagesPerHost, latencyMs: whole('latency', o.latency!, 0) });
const work = await mkdtemp(join(tmpdir(), 'mountcrawl-warc-bench-'));
const results: Record<'plain' | 'warc', { rate: number; cpuMs: number }[]> = { plain: [], warc: [] };
try {
  for (let round = 0; round < rounds; round++) {
    for (const mode of ['plain', 'warc'] as const) {
      site.reset();
      const data = join(work, `${mode}-${round}`);
      const args = [
        MOUNTCRAWL_BIN,
        'crawl',
        ...site.seeds(),
        '--data',
        data,
        '--processes',
        String(processes),
        '--per-host',
        '8',
        '--delay',
        '0',
        '--concurrency',
        '32',
        '--no-progress',
      ];
      if (mode === 'warc') args.push('--warc');
      const m = await measure(process.execPath, args, {
        env: { ...process.env, MOUNTCRAWL_DATA: '' },
        logPrefix: join(work, `${mode}-${round}`),
        timeoutMs: 1_800_000,
        role: (depth) => (depth === 1 ? 'node' : 'child'),
      });
      if (m.exitCode !== 0) throw new Error(`${mode} run ${round} exited ${m.exitCode}`);
      const pages = site.counts().pagesFetched;
      const r = { rate: pages / m.wallSeconds, cpuMs: (m.cpuSeconds * 1000) / pages };
      results[mode].push(r);
      console.log(
        `${mode.padEnd(5)} round ${round}: ${pages} pages, ${m.wallSeconds.toFixed(1)} s, ${r.rate.toFixed(0)} pages/s, CPU ${r.cpuMs.toFixed(2)} ms/page (${m.cpuSource}), peak RSS ${m.maxRssMb} MiB`,
      );
      await rm(data, { recursive: true, force: true });
    }
  }
  for (const mode of ['plain', 'warc'] as const) {
    const rs = results[mode];
    console.log(
      `${mode.padEnd(5)} median: ${median(rs.map((r) => r.rate)).toFixed(0)} pages/s, CPU ${median(rs.map((r) => r.cpuMs)).toFixed(2)} ms/page`,
    );
  }
} finally {
  await site.close();
  await rm(work, { recursive: true, force: true });
}
