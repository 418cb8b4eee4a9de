import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { benchScript, runNode } from '../../support/bench-script.js';

const BENCH = benchScript('scale.js');

describe('npm run bench:scale, smoke test on 1,000 pages of 10 hosts', () => {
  test('it builds the crawl, times a resume and a takeover, and reads the peak RSS of a node that knows every URL', {
    timeout: 180_000,
  }, async () => {
    const { code, stdout, stderr } = await runNode([
      BENCH,
      '--pages',
      '1000',
      '--hosts',
      '10',
      '--links',
      '10',
      '--new-links',
      '2',
      '--largest',
      '0.3',
      '--port-base',
      '29000',
    ]);
    assert.equal(code, 0, stderr);
    const r = JSON.parse(stdout.trim()) as {
      resume: { exit: number; firstRequestS: number; fullSpeedS: number; pages: number };
      takeover: { records: number; takeoverS: number };
      memory: { known: number; queued: number; peakRssMiB: number };
    };
    assert.equal(r.resume.exit, 0, stderr);
    assert.equal(r.resume.pages, 200, '--max-pages of the resume: a tenth of the new pages');
    assert.ok(r.resume.firstRequestS > 0 && r.resume.fullSpeedS >= r.resume.firstRequestS);
    assert.ok(r.takeover.records >= 300, 'the largest host: 30% of the records, and the pages the resume fetched of it');
    assert.ok(r.takeover.takeoverS > 0);
    assert.equal(r.memory.known, 3000);
    assert.ok(r.memory.queued >= 1800 - 200, `queued ${r.memory.queued}: the new URLs not fetched by the resume`);
    assert.ok(r.memory.peakRssMiB > 20 && r.memory.peakRssMiB < 1024, `peak RSS ${r.memory.peakRssMiB} MiB`);
  });
});
