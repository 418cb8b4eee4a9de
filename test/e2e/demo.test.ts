import assert from 'node:assert/strict';
import { join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { BIN, runCli, tempDir } from '../support/cli.js';
import { listFiles } from '../support/data-files.js';

let tmp: { path: string; cleanup: () => Promise<void> };
before(async () => {
  tmp = await tempDir();
});
after(async () => {
  await tmp.cleanup();
});

test('mountcrawl demo crawls its own loopback site with several nodes and shows the result', { timeout: 60_000 }, async () => {
  const data = join(tmp.path, 'crawl-data');
  const r = await runCli(['demo', '--data', data, '--hosts', '3', '--pages', '30', '--processes', '2', '--no-progress']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /demo site: 3 hosts x 30 pages/);
  assert.match(r.stdout, /^90 pages done, 0 errors, 3 excluded by robots\.txt, \d+ requests served$/m);
  assert.match(r.stderr, /all 2 nodes ended: 90 pages/);
  assert.match(r.stdout, /browse it:/);
  // No shell glob over a host's records (README: "argument list too long" on a big crawl).
  assert.doesNotMatch(r.stdout, /\*\.json/);
  assert.match(r.stdout, / export --host \S+ --data /);
  const files = await listFiles(data);
  assert.equal(files.filter((f) => f.startsWith('html/')).length, 90);
  assert.equal(files.filter((f) => f.startsWith('links/')).length, 90);
});

test('a second demo into the same data directory serves the same hosts: no new hosts, no stale seeds, nothing fetched twice', {
  timeout: 90_000,
}, async () => {
  const data = join(tmp.path, 'again');
  const args = ['demo', '--data', data, '--hosts', '2', '--pages', '10', '--processes', '2', '--no-progress'];
  const first = await runCli(args);
  assert.equal(first.code, 0, first.stderr);
  const second = await runCli(args);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /^20 pages done, 0 errors, 2 excluded by robots\.txt, \d+ requests served$/m, second.stdout);
  assert.doesNotMatch(second.stdout + second.stderr, /CONNECTION_REFUSED/);
  assert.match(second.stderr, /all 2 nodes ended: 0 pages/);
  const hosts = new Set((await listFiles(data)).filter((f) => f.startsWith('links/')).map((f) => f.split('/')[1]));
  assert.equal(hosts.size, 2);
  // The closing hint names the command as it was run (here: node and the path of bin/mountcrawl.js).
  const rel = relative(process.cwd(), BIN);
  assert.ok(second.stdout.includes(`  node ${rel.startsWith('..') ? BIN : rel} status --data ${data}`), second.stdout);
});
