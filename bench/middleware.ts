/**
 * Cost of the fetch middleware per request with the built-in steps only (no --hook): the
 * before-chain (default headers, robots gate) and the after-chain (status decision).
 * Run: npm run build && node dist/bench/middleware.js
 */
import type { FetchedResponse } from '../src/fetch/fetcher.js';
import { fetchMiddleware } from '../src/hooks/builtin-steps.js';

const chain = fetchMiddleware(
  'ua',
  () => true,
  () => Date.now(),
);
const res: FetchedResponse = {
  url: 'http://a.example/',
  status: 200,
  headers: {},
  mediaType: 'text/html',
  contentType: 'text/html',
  body: Buffer.from('x'),
  truncated: false,
  durationMs: 1,
};
const N = 200_000;
for (let round = 0; round < 3; round++) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) {
    const req = { url: 'http://a.example/x', depth: 1, host: 'a.example', kind: 'page' as const, headers: {} };
    await chain.before(req);
    await chain.after(req, res, false);
  }
  const us = Number(process.hrtime.bigint() - t0) / N / 1000;
  console.log(`round ${round}: ${us.toFixed(2)} us per request (before + after, built-in steps only)`);
}
