/**
 * `npm run bench:report` (issue 11): builds a data directory of --pages links records (and
 * 2% errs records) with the crawler's own writers (HostStore, buildLinksRecord,
 * buildErrsRecord), then times `mountcrawl report` (HTML) and `report --json` on it, each in a
 * child process measured with GNU time (wall, CPU, peak RSS).
 *
 *   node dist/bench/report-time.js [--pages 100000] [--hosts 100] [--links 10] [--data DIR] [--keep]
 *
 * --data DIR reuses a directory built before (with the same options).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildErrsRecord, buildLinksRecord } from '../src/commit/build-records.js';
import type { Target } from '../src/fetch/page-outcome.js';
import { FetchFailure } from '../src/errors.js';
import type { FetchedResponse } from '../src/fetch/fetcher.js';
import { openDataDir } from '../src/store/data-dir.js';
import { HostStore } from '../src/store/host-store.js';
import { urlKey } from '../src/url/key.js';
import { NORMALIZATION_VERSION } from '../src/url/normalize.js';
import { mapLimit } from '../src/util/map-limit.js';
import { rng } from './pages.js';
import { benchArgs } from './args.js';

const BIN = fileURLToPath(new URL('../../bin/mountcrawl.js', import.meta.url));

async function build(dir: string, pages: number, hosts: number, links: number): Promise<void> {
  const nodeIds = ['node-a', 'node-b', 'node-c'];
  const { layout } = await openDataDir(dir, nodeIds[0]!, { version: NORMALIZATION_VERSION, sessionParams: [] });
  const store = new HostStore(layout, { nodeId: nodeIds[0]!, fsync: false });
  const random = rng(11);
  const start = Date.parse('2026-11-23T10:00:00Z');
  const perHost = Math.ceil(pages / hosts);
  const items = Array.from({ length: pages }, (_, i) => i);
  await mapLimit(items, 32, async (i) => {
    const h = i % hosts;
    const n = Math.floor(i / hosts);
    const host = `site${h}.example`;
    const url = `http://${host}/p/${n}.html`;
    const target: Target = { url, key: urlKey(url), hostDir: host, depth: Math.min(12, Math.floor(Math.log2(n + 1))) };
    const nodeId = nodeIds[h % nodeIds.length]!;
    const nowMs = start + Math.floor((i / pages) * 3_600_000);
    if (random() < 0.02) {
      const failure =
        random() < 0.5
          ? new FetchFailure('HTTP_404', 'final', 'HTTP 404', { status: 404 })
          : new FetchFailure('FETCH_TIMEOUT', 'transient', 'no answer within 30 s');
      const record = buildErrsRecord(target, failure, undefined, {
        nodeId,
        nowMs,
        retryInMs: failure.kind === 'final' ? undefined : 60_000,
      });
      await store.writeErrs(host, target.key, record);
      return;
    }
    const outLinks = Array.from(
      { length: links },
      () => `http://site${Math.floor(random() * hosts)}.example/p/${Math.floor(random() * perHost)}.html`,
    );
    const response = {
      url,
      status: 200,
      headers: {},
      mediaType: 'text/html',
      contentType: 'text/html; charset=utf-8',
      body: null,
      truncated: false,
      durationMs: 20,
    } satisfies FetchedResponse;
    const record = buildLinksRecord(
      { type: 'page', target, response, finalUrl: url, redirects: [], body: null, links: [...new Set(outLinks)] },
      { nodeId, nowMs, htmlPath: null },
    );
    await store.writePage(host, target.key, null, { ...record, bytes: 2000 + Math.floor(random() * 30_000) });
  });
}

function timed(args: string[]): { wall: number; cpu: number; rssMiB: number } {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, BIN, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`report failed: ${r.stderr}`);
  const line = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { wall: line[0]!, cpu: line[1]! + line[2]!, rssMiB: Math.round(line[3]! / 1024) };
}

async function main(): Promise<void> {
  const { values } = benchArgs({
    options: {
      pages: { type: 'string', default: '100000' },
      hosts: { type: 'string', default: '100' },
      links: { type: 'string', default: '10' },
      data: { type: 'string' },
      keep: { type: 'boolean', default: false },
    },
  });
  const pages = Number(values.pages);
  const dir = values.data !== undefined ? resolve(values.data) : await mkdtemp(join(tmpdir(), 'mountcrawl-report-bench-'));
  if (values.data === undefined || !existsSync(join(dir, '.mountcrawl'))) {
    const t0 = Date.now();
    await build(dir, pages, Number(values.hosts), Number(values.links));
    console.log(`built ${pages} records in ${dir} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  try {
    const html = timed(['report', '--data', dir, '--out', join(dir, '..', 'bench-report.html')]);
    console.log(`report (HTML): ${html.wall} s wall, ${html.cpu.toFixed(1)} s CPU, peak RSS ${html.rssMiB} MiB`);
    const json = timed(['report', '--data', dir, '--json', '--out', join(dir, '..', 'bench-report.json')]);
    console.log(`report --json: ${json.wall} s wall, ${json.cpu.toFixed(1)} s CPU, peak RSS ${json.rssMiB} MiB`);
  } finally {
    if (!values.keep && values.data === undefined) await rm(dir, { recursive: true, force: true });
  }
}

await main();
