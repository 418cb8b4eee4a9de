import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { benchScript, gnuTimeOrSkip, runNode } from '../../support/bench-script.js';

const NODE_MEMORY = benchScript('node-memory.js');
const BENCH = benchScript('summary-resume.js');

describe('node dist/bench/summary-resume.js, smoke test on 2,000 records', () => {
  test('a node that stopped cleanly left a summary of each host: the next resume reads no record, one without summaries reads them all', {
    timeout: 90_000,
  }, async (t) => {
    if (!gnuTimeOrSkip(t)) return; // the crawl is made by bench:node-memory
    const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-summary-resume-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const data = join(dir, 'data');
    const made = await runNode([NODE_MEMORY, '--records', '2000', '--hosts', '4', '--links', '10', '--data', data, '--keep']);
    assert.equal(made.code, 0, made.stderr);
    assert.equal((await readdir(join(data, 'summaries'))).filter((n) => n.endsWith('.json') && !n.startsWith('.')).length, 4);
    const r = await runNode([BENCH, '--data', data]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout.trim()) as { without: { recordsRead: number }; with: { recordsRead: number } };
    assert.equal(result.without.recordsRead, 2004, 'the records and the 4 seeds');
    assert.equal(result.with.recordsRead, 0);
  });
});
