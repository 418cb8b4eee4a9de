/**
 * A node's resume with and without host summaries (docs/protocol.md, "Host summaries"): on a
 * finished crawl (one `node dist/bench/node-memory.js --keep` leaves, whose node wrote the
 * summaries at its clean stop), `mountcrawl crawl` is run with summaries/ moved aside, then
 * with it back. Nothing is left to fetch, so each run is the node's start, its take of every
 * host, its full reseed (records or summaries) and its stop: the time until its frontier is back.
 *
 *   node dist/bench/summary-resume.js --data DIR [--sshfs] [--runs 1]
 *
 * --sshfs copies DIR into the export of an sshfs pair (test/support/sshfs-pair.ts) and runs
 * the node on one of its mounts. DIR itself is not changed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startSshfsPair } from '../test/support/sshfs-pair.js';
import { benchArgs } from './args.js';
import { round, wholeArg } from './measure.js';
import { MOUNTCRAWL_BIN } from './peers.js';

const { values: o } = benchArgs({
  options: {
    data: { type: 'string' },
    sshfs: { type: 'boolean', default: false },
    runs: { type: 'string', default: '1' },
  },
});
const log = (line: string): void => void process.stderr.write(`summary-resume bench: ${line}\n`);
const runs = wholeArg('summary-resume bench', 'runs', o.runs, 1);
if (o.data === undefined || !existsSync(join(o.data, 'summaries'))) {
  log('--data must name a finished crawl with summaries/ (node dist/bench/node-memory.js --keep leaves one)');
  process.exit(2);
}
const source = resolve(o.data);

/** One resume: wall seconds, and the records and summaries its reseeds read (from its end summary). */
async function resume(dataDir: string): Promise<{ wallS: number; recordsRead: number; cpuS: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [MOUNTCRAWL_BIN, 'crawl', '--data', dataDir, '--no-progress', '--delay', '0', '--json'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  const wallS = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`the node exited ${code}: ${stderr.slice(-500)}`);
  const summary = stderr
    .split('\n')
    .map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg?: string; cpuSeconds?: number; discovery?: { recordsRead: number } }) : {}))
    .find((l) => l.msg === 'summary');
  return { wallS: round(wallS, 2), recordsRead: summary?.discovery?.recordsRead ?? -1, cpuS: summary?.cpuSeconds ?? -1 };
}

const pair = o.sshfs ? await startSshfsPair(2) : undefined;
if (pair !== undefined && 'skip' in pair) {
  log(`no sshfs pair: ${pair.skip}`);
  process.exit(2);
}
try {
  let dataDir = source;
  if (pair !== undefined) {
    execFileSync('cp', ['-a', source, join(pair.export, 'data')]);
    dataDir = join(pair.mounts[0]!, 'data');
  }
  // Moved aside through the mount the node uses, so that its caches see it.
  const local = dataDir;
  const results: Record<string, unknown>[] = [];
  for (let i = 0; i < runs; i++) {
    await rename(join(local, 'summaries'), join(local, 'summaries-aside'));
    let without: Awaited<ReturnType<typeof resume>>;
    try {
      without = await resume(dataDir);
    } finally {
      await rename(join(local, 'summaries-aside'), join(local, 'summaries'));
    }
    const withSummaries = await resume(dataDir);
    log(`without summaries ${JSON.stringify(without)}; with ${JSON.stringify(withSummaries)}`);
    results.push({ mount: pair === undefined ? 'local' : 'sshfs', without, with: withSummaries });
  }
  for (const r of results) process.stdout.write(`${JSON.stringify(r)}\n`);
} finally {
  await pair?.stop();
}
