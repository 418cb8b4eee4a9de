import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { benchScript, gnuTimeOrSkip, runNode } from '../../support/bench-script.js';
import type { ReadSpeed } from '../../../bench/read-speed.js';

const BENCH = benchScript('read-speed.js');

describe('npm run bench:read, smoke test on 400 records', () => {
  test('builds a crawl with summaries, then status, export, export --fields and report each run once, every record exported', {
    timeout: 60_000,
  }, async (t) => {
    if (!gnuTimeOrSkip(t)) return;
    const { code, stdout, stderr } = await runNode([BENCH, '--pages', '400', '--hosts', '4', '--links', '5']);
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
