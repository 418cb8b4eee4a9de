import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ReadSpeed } from '../../../bench/read-speed.js';
import { haveGnuTime } from '../../../bench/measure.js';

const BENCH = fileURLToPath(new URL('../../../bench/read-speed.js', import.meta.url));

describe('npm run bench:read, smoke test on 400 records', () => {
  test('builds a crawl with summaries, then status, export, export --fields and report each run once, every record exported', {
    timeout: 60_000,
  }, async (t) => {
    if (!haveGnuTime()) {
      if (process.env.CI !== undefined) assert.fail('GNU time (/usr/bin/time) is missing in CI: .ci/run installs it');
      t.skip('GNU time (/usr/bin/time) is not installed');
      return;
    }
    const child = spawn(process.execPath, [BENCH, '--pages', '400', '--hosts', '4', '--links', '5'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, stderr);
    const r = JSON.parse(stdout.trim()) as ReadSpeed & { pages: number; mount: string };
    assert.equal(r.pages, 400);
    assert.equal(r.mount, 'local');
    assert.equal(r.export.lines, 400);
    assert.equal(r.exportFields.lines, 400);
    assert.match(stderr, /400 records over 4 hosts written/);
    for (const run of [r.status, r.export, r.exportFields, r.report]) {
      assert.ok(run.peakRssMiB > 20 && run.peakRssMiB < 1024, `peak RSS ${run.peakRssMiB} MiB`);
    }
  });
});
