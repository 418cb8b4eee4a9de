import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { benchScript, gnuTimeOrSkip, runNode } from '../../support/bench-script.js';

const BENCH = benchScript('node-memory.js');

describe('npm run bench:node-memory, smoke test on 2,000 records', () => {
  test('the node resumes on the records: it knows every recorded URL (fetches only robots.txt and the seeds) and its peak RSS is read', {
    timeout: 60_000,
  }, async (t) => {
    if (!gnuTimeOrSkip(t)) return;
    const { code, stdout, stderr } = await runNode([BENCH, '--records', '2000', '--hosts', '4', '--links', '10']);
    assert.equal(code, 0, stderr);
    const r = JSON.parse(stdout.trim()) as { records: number; exit: number; peakRssMiB: number; requests: number };
    assert.equal(r.records, 2000);
    assert.equal(r.exit, 0, stderr);
    assert.equal(r.requests, 8, 'robots.txt and / of each of the 4 hosts, nothing recorded fetched again');
    assert.ok(r.peakRssMiB > 20 && r.peakRssMiB < 1024, `peak RSS ${r.peakRssMiB} MiB`);
    assert.match(stderr, /data directory: 2004 pages of 4 hosts, 0 errors/);
  });
});
