/**
 * `npm run bench:reseed` (issue 5): builds a data directory with many links records, then
 * times reseeds with the real Reseeder (src/reseed/reseeder.ts): the first scan, a reseed with
 * nothing new, and a reseed after a few new records. The scans run in a child process of
 * their own, so its peak RSS is the reseed's and not the builder's.
 *
 *   node dist/bench/reseed.js [--records 1000000] [--hosts 100] [--links 40] [--new 1000]
 *     [--sink minimal|node] [--data DIR] [--keep] [--cold] [--results bench/results]
 *
 * --data DIR reuses a directory built before (with the same --records and --hosts) instead
 * of building one. --cold drops the page cache before the first scan (root only).
 * --sink node makes each offer cost what CrawlNode's does (a SHA-224 key and a set lookup);
 * minimal only counts.
 */
import { execFileSync, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../src/config/clock.js';
import type { ReseedSink, ReseedStats } from '../src/reseed/reseed-sink.js';
import { Reseeder } from '../src/reseed/reseeder.js';
import { Layout } from '../src/store/layout.js';
import { serializeRecord, type LinksRecord } from '../src/store/records.js';
import { urlKey } from '../src/url/key.js';
import { KeySet } from '../src/url/key-set.js';
import { mapLimit } from '../src/util/map-limit.js';
import { machineBusySeconds } from './measure.js';
import { rng } from './pages.js';
import { benchArgs } from './args.js';
import { benchLinksRecord } from './links-record.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

const { values: o } = benchArgs({
  options: {
    records: { type: 'string', default: '1000000' },
    hosts: { type: 'string', default: '100' },
    links: { type: 'string', default: '40' },
    new: { type: 'string', default: '1000' },
    sink: { type: 'string', default: 'minimal' },
    data: { type: 'string' },
    keep: { type: 'boolean', default: false },
    cold: { type: 'boolean', default: false },
    results: { type: 'string', default: join(REPO, 'bench', 'results') },
    phase: { type: 'string', default: 'all' },
  },
});

const records = Number(o.records);
const hosts = Number(o.hosts);
const linksPerRecord = Number(o.links);
const newRecords = Number(o.new);
if (![records, hosts, linksPerRecord, newRecords].every((n) => Number.isInteger(n) && n >= 0) || hosts < 1) {
  process.stderr.write('reseed bench: --records, --hosts, --links and --new must be whole numbers (--hosts >= 1)\n');
  process.exit(2);
}
if (o.sink !== 'minimal' && o.sink !== 'node') {
  process.stderr.write('reseed bench: --sink must be minimal or node\n');
  process.exit(2);
}
const log = (line: string): void => void process.stderr.write(`reseed bench: ${line}\n`);

/** Host directory (and host name) of host h. */
const hostName = (h: number): string => `www.site-${String(h).padStart(4, '0')}.example`;
/** URL of page j of host h: the pages a crawl of that host would have found. */
const pageUrl = (h: number, j: number): string => `https://${hostName(h)}/articles/${j % 97}/story-${j}.html`;

/**
 * The links record of page j of host h, as a node writes it: real field set and
 * serialization; links mostly to the same host (some to pages not fetched yet), some to
 * other hosts, a few external.
 */
function record(h: number, j: number, perHost: number): LinksRecord {
  const r = rng(h * 7_000_003 + j);
  const links: string[] = [];
  for (let k = 0; k < linksPerRecord; k++) {
    const x = r();
    if (x < 0.75) links.push(pageUrl(h, Math.floor(r() * perHost * 1.2)));
    else if (x < 0.95) links.push(pageUrl(Math.floor(r() * hosts), Math.floor(r() * perHost)));
    else links.push(`https://cdn-${Math.floor(r() * 50)}.elsewhere.example/share?id=${Math.floor(r() * 1e6)}`);
  }
  return benchLinksRecord(pageUrl(h, j), hostName(h), j, [...new Set(links)], r);
}

function* indexesOf(from: number, to: number): Generator<number> {
  for (let i = from; i < to; i++) yield i;
}

/** Writes records [from, to) of the host-major order (record i: host i % hosts, page i / hosts). */
async function writeRecords(layout: Layout, from: number, to: number, perHost: number): Promise<void> {
  let done = 0;
  const started = performance.now();
  await mapLimit(indexesOf(from, to), 64, async (i) => {
    const h = i % hosts;
    const rec = record(h, Math.floor(i / hosts), perHost);
    await writeFile(layout.links(hostName(h), urlKey(rec.url)), serializeRecord(rec));
    if (++done % 100_000 === 0) log(`${done} records written (${Math.round(done / ((performance.now() - started) / 1000))}/s)`);
  });
}

async function build(root: string): Promise<number> {
  const layout = new Layout(root);
  const started = performance.now();
  for (const d of ['links', 'seeds', 'errs', 'nodes'] as const) await mkdir(layout.dir(d), { recursive: true });
  for (let h = 0; h < hosts; h++) await mkdir(layout.hostDir('links', hostName(h)), { recursive: true });
  await writeRecords(layout, 0, records, Math.ceil(records / hosts));
  return (performance.now() - started) / 1000;
}

/** The child: runs the reseeds and prints what they did as one JSON line. */
async function scan(root: string): Promise<void> {
  const layout = new Layout(root);
  const heartbeat = layout.node('bench-reseed');
  // The mount's clock, as a node reads it: the mtime of its own freshly written heartbeat.
  let serverTime: { mtimeMs: number } | undefined;
  const beat = async (): Promise<void> => {
    await writeFile(heartbeat, '{}\n');
    serverTime = { mtimeMs: (await stat(heartbeat)).mtimeMs };
  };
  const reseeder = new Reseeder(layout, { clock: systemClock, serverTime: () => serverTime });
  let offers = 0;
  const keys = new KeySet(); // what a node's done sets are
  const sink: ReseedSink = {
    wantsHost: () => true,
    prepareHosts: async () => undefined,
    addSeed: () => undefined,
    offer:
      o.sink === 'node'
        ? (url) => {
            offers++;
            const key = urlKey(url);
            return keys.add(key) ? 'queued' : 'known';
          }
        : () => {
            offers++;
            return 'known';
          },
  };
  const timed = async (name: string): Promise<Record<string, unknown>> => {
    await beat();
    offers = 0;
    const cpu = process.cpuUsage();
    const machine = machineBusySeconds();
    const started = performance.now();
    const stats: ReseedStats = await reseeder.reseed(sink, false);
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const other = machineBusySeconds() - machine - (used.user + used.system) / 1e6;
    const row = {
      reseed: name,
      seconds: Math.round(seconds * 1000) / 1000,
      recordsPerSecond: Math.round(stats.recordsRead / seconds),
      cpuSeconds: Math.round((used.user + used.system) / 1e4) / 100,
      // CPU the rest of the machine used meanwhile (other programs, kernel): a noisy neighbour shows here.
      otherCpuSeconds: Math.round(Math.max(0, other) * 100) / 100,
      threadpool: Number(process.env.UV_THREADPOOL_SIZE ?? 4),
      offers,
      ...stats,
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 102.4) / 10,
    };
    log(
      `${name}: ${row.seconds} s, ${stats.recordsRead} records read, ${stats.dirsListed} dirs listed, ` +
        `${stats.dirsSkipped} skipped, CPU ${row.cpuSeconds} s (others ${row.otherCpuSeconds} s), peak RSS ${row.peakRssMb} MiB`,
    );
    return row;
  };
  const rows = [await timed('first scan'), await timed('nothing new')];
  if (newRecords > 0) {
    // New records appear the way a crawl adds them: spread over the hosts.
    const perHost = Math.ceil(records / hosts);
    await writeRecords(layout, records, records + newRecords, perHost);
    rows.push(await timed(`${newRecords} new records`));
    // Gone again, so that the directory can be reused (--data) with the same contents.
    await mapLimit(indexesOf(records, records + newRecords), 64, async (i) => {
      await rm(layout.links(hostName(i % hosts), urlKey(pageUrl(i % hosts, Math.floor(i / hosts)))));
    });
  }
  if (process.send) process.send(rows);
  else process.stdout.write(`${JSON.stringify(rows)}\n`); // run alone (for a profile)
}

if (o.phase === 'scan') {
  await scan(o.data!);
  if (process.connected) process.disconnect();
} else {
  const root = o.data !== undefined ? resolve(o.data) : await mkdtemp(join(tmpdir(), 'mountcrawl-reseed-'));
  let buildSeconds: number | null = null;
  const reuse = o.data !== undefined && existsSync(join(root, 'links'));
  if (reuse) {
    const dirs = await readdir(join(root, 'links'));
    log(`reusing ${root} (${dirs.length} host directories, built with the same --records and --hosts)`);
  } else {
    log(`building ${records} links records over ${hosts} hosts in ${root}`);
    buildSeconds = await build(root);
    log(`built in ${buildSeconds.toFixed(1)} s`);
  }
  // A reseed only trusts a directory mtime that is older than the mount's clock by a margin
  // (MTIME_SLACK_MS, 2 s): a real crawl's directories are older than that.
  await new Promise((r) => setTimeout(r, 2500));
  let cacheDropped = false;
  if (o.cold) {
    try {
      execFileSync('sync');
      await writeFile('/proc/sys/vm/drop_caches', '3\n');
      cacheDropped = true;
    } catch (err) {
      log(`--cold: could not drop the page cache (${(err as Error).message}); the first scan is warm`);
    }
  }
  const child = fork(
    fileURLToPath(import.meta.url),
    [
      '--phase',
      'scan',
      '--data',
      root,
      '--sink',
      o.sink!,
      '--new',
      String(newRecords),
      '--records',
      String(records),
      '--hosts',
      String(hosts),
      '--links',
      String(linksPerRecord),
    ],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // As bin/mountcrawl.js sets it for every node: file reads in flight beyond libuv's default 4.
      env: { ...process.env, UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16' },
    },
  );
  const rows = await new Promise<Record<string, unknown>[]>((resolveRows, reject) => {
    child.once('message', (m) => resolveRows(m as Record<string, unknown>[]));
    child.once('exit', (code) => reject(new Error(`scan process exited with ${code}`)));
  });
  const result = {
    version: 1,
    date: new Date().toISOString(),
    records,
    hosts,
    linksPerRecord,
    sink: o.sink,
    cacheDropped,
    buildSeconds,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version },
    reseeds: rows,
    targets: [
      {
        target: 'first scan of 1,000,000 records, s',
        measured: rows[0]!.seconds,
        limit: '<= 60',
        met: records >= 1_000_000 ? (rows[0]!.seconds as number) <= 60 : null,
      },
      { target: 'reseed with nothing new, s', measured: rows[1]!.seconds, limit: '<= 2', met: (rows[1]!.seconds as number) <= 2 },
    ],
  };
  await mkdir(o.results!, { recursive: true });
  const file = join(o.results!, `${new Date().toISOString().replace(/[:]/g, '').replace(/\..*$/, 'Z')}-reseed-${records}.json`);
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n(${file})\n`);
  if (!o.keep && o.data === undefined) await rm(root, { recursive: true, force: true });
  else log(`kept ${root}`);
}
