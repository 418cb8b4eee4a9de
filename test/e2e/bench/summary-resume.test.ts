import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { haveGnuTime } from '../../../bench/measure.js';

const NODE_MEMORY = fileURLToPath(new URL('../../../bench/node-memory.js', import.meta.url));
const BENCH = fileURLToPath(new URL('../../../bench/summary-resume.js', import.meta.url));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('node dist/bench/summary-resume.js, smoke test on 2,000 records', () => {
  test('a node that stopped cleanly left a summary of each host: the next resume reads no record, one without summaries reads them all', {
    timeout: 90_000,
  }, async (t) => {
    if (!haveGnuTime()) {
      t.skip('GNU time (/usr/bin/time) is not installed (the crawl is made by bench:node-memory)');
      return;
    }
    const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-summary-resume-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const data = join(dir, 'data');
    const made = await run([NODE_MEMORY, '--records', '2000', '--hosts', '4', '--links', '10', '--data', data, '--keep']);
    assert.equal(made.code, 0, made.stderr);
    assert.equal((await readdir(join(data, 'summaries'))).filter((n) => n.endsWith('.json') && !n.startsWith('.')).length, 4);
    const r = await run([BENCH, '--data', data]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout.trim()) as { without: { recordsRead: number }; with: { recordsRead: number } };
    assert.equal(result.without.recordsRead, 2004, 'the records and the 4 seeds');
    assert.equal(result.with.recordsRead, 0);
  });
});
