import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { haveGnuTime } from '../../../bench/measure.js';

const BENCH = fileURLToPath(new URL('../../../bench/node-memory.js', import.meta.url));

describe('npm run bench:node-memory, smoke test on 2,000 records', () => {
  test('the node resumes on the records: it knows every recorded URL (fetches only robots.txt and the seeds) and its peak RSS is read', {
    timeout: 60_000,
  }, async (t) => {
    if (!haveGnuTime()) {
      if (process.env.CI !== undefined) assert.fail('GNU time (/usr/bin/time) is missing in CI: .ci/run installs it');
      t.skip('GNU time (/usr/bin/time) is not installed');
      return;
    }
    const child = spawn(process.execPath, [BENCH, '--records', '2000', '--hosts', '4', '--links', '10'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, stderr);
    const r = JSON.parse(stdout.trim()) as { records: number; exit: number; peakRssMiB: number; requests: number };
    assert.equal(r.records, 2000);
    assert.equal(r.exit, 0, stderr);
    assert.equal(r.requests, 8, 'robots.txt and / of each of the 4 hosts, nothing recorded fetched again');
    assert.ok(r.peakRssMiB > 20 && r.peakRssMiB < 1024, `peak RSS ${r.peakRssMiB} MiB`);
    assert.match(stderr, /data directory: 2004 pages of 4 hosts, 0 errors/);
  });
});
