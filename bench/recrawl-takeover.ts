/**
 * What a node pays to take over one host of many pages with --recrawl-after (issue 10,
 * docs/recrawl.md "Storage"): the host's listing (as HostKeeper reads it), then its schedule
 * either rebuilt from every links record (no schedule file) or read whole (a current one).
 *
 *   node dist/bench/recrawl-takeover.js [--urls 100000] [--data DIR] [--keep]
 *
 * Each measurement runs in a child process of its own (peak RSS and page cache as a new
 * node would see them, warm cache: the records were just written).
 */
import { fork } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSchedule, writeSchedule } from '../src/recrawl/schedule-file.js';
import { HostStore } from '../src/store/host-store.js';
import { DIRS, Layout } from '../src/store/layout.js';
import { RECORD_VERSION, serializeRecord, type LinksRecord } from '../src/store/records.js';
import { urlKey } from '../src/url/key.js';
import { mapLimit } from '../src/util/map-limit.js';
import { benchArgs } from './args.js';

const HOST = 'big.example';

const { values: o } = benchArgs({
  options: {
    urls: { type: 'string', default: '100000' },
    data: { type: 'string' },
    keep: { type: 'boolean', default: false },
    child: { type: 'string' },
  },
});

async function measure(root: string, withSchedule: boolean): Promise<void> {
  const layout = new Layout(root);
  const started = performance.now();
  const listing = await new HostStore(layout, { nodeId: 'bench', fsync: false }).listHost(HOST, () => false);
  const listed = performance.now();
  const { schedule, recordsRead } = await loadSchedule(layout, HOST, listing.linksKeys, 7 * 86_400_000);
  const loaded = performance.now();
  if (!withSchedule) await writeSchedule(layout, HOST, schedule, { nodeId: 'bench', fsync: false, nowMs: Date.now() });
  const written = performance.now();
  process.send!({
    listingMs: Math.round(listed - started),
    scheduleMs: Math.round(loaded - listed),
    writeMs: Math.round(written - loaded),
    recordsRead,
    pages: schedule.size,
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  });
}

async function inChild(root: string, mode: string): Promise<Record<string, number>> {
  const child = fork(fileURLToPath(import.meta.url), ['--data', root, '--child', mode]);
  return await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m as Record<string, number>));
    child.once('error', reject);
  });
}

async function build(root: string, n: number): Promise<void> {
  for (const d of Object.values(DIRS)) await mkdir(join(root, d), { recursive: true });
  await mkdir(join(root, DIRS.links, HOST), { recursive: true });
  const fetchedAt = new Date().toISOString();
  await mapLimit(
    Array.from({ length: n }, (_, i) => i),
    64,
    async (i) => {
      const url = `http://${HOST}/page/${i}`;
      const r: LinksRecord = {
        v: RECORD_VERSION,
        url,
        finalUrl: url,
        status: 200,
        contentType: 'text/html',
        bytes: 20_000,
        fetchedAt,
        depth: 3,
        node: 'bench',
        durationMs: 40,
        html: `html/${HOST}/${urlKey(url)}.html`,
        links: Array.from({ length: 20 }, (_, k) => `http://${HOST}/page/${(i * 7 + k) % n}`),
      };
      await writeFile(new Layout(root).links(HOST, urlKey(url)), serializeRecord(r));
    },
  );
}

if (o.child !== undefined) {
  await measure(o.data!, o.child === 'current');
} else {
  const n = Number(o.urls);
  const root = o.data ?? (await mkdtemp(join(tmpdir(), 'mountcrawl-takeover-')));
  const t0 = performance.now();
  if (o.data === undefined) await build(root, n);
  console.log(`built ${n} links records of one host in ${Math.round(performance.now() - t0)} ms (${root})`);
  await rm(new Layout(root).schedule(HOST), { force: true });
  const rebuild = await inChild(root, 'rebuild');
  console.log('takeover, no schedule file (rebuilt from the records):', JSON.stringify(rebuild));
  const current = await inChild(root, 'current');
  console.log('takeover, current schedule file:', JSON.stringify(current));
  console.log(`schedule file: ${(await stat(new Layout(root).schedule(HOST))).size} bytes`);
  if (!o.keep && o.data === undefined) await rm(root, { recursive: true, force: true });
}
