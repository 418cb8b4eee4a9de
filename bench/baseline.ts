/**
 * The fetch-only baseline: the limit a crawler could reach on this machine. It GETs every URL
 * of a known list with one undici Agent (keep-alive, at most --per-host connections per
 * origin) and --concurrency requests in flight in all, reads each body to the end and throws
 * it away: no parsing, no storage, no robots.txt, no frontier. Prints one JSON line.
 *
 *   node dist/bench/baseline.js --urls FILE --concurrency 64 --per-host 8
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';

function option(name: string, fallback?: string): string {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? process.argv[i + 1] : fallback;
  if (v === undefined) throw new Error(`missing ${name}`);
  return v;
}

const urls = readFileSync(option('--urls'), 'utf8')
  .split('\n')
  .filter((l) => l !== '');
const concurrency = Number(option('--concurrency', '64'));
const perHost = Number(option('--per-host', '8'));
const agent = new Agent({ connections: perHost, pipelining: 1, keepAliveTimeout: 30_000 });

let next = 0;
let bytes = 0;
let errors = 0;
const started = performance.now();

async function worker(): Promise<void> {
  while (next < urls.length) {
    const url = urls[next++]!;
    try {
      const res = await request(url, { dispatcher: agent, headers: { 'user-agent': 'mountcrawl-bench-baseline' } });
      for await (const chunk of res.body) bytes += (chunk as Buffer).length;
      if (res.statusCode !== 200) errors++;
    } catch {
      errors++;
    }
  }
}

await Promise.all(Array.from({ length: concurrency }, worker));
await agent.close();
process.stdout.write(`${JSON.stringify({ requests: urls.length, errors, bytes, seconds: (performance.now() - started) / 1000 })}\n`);
