import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli, tempDir } from '../support/cli.js';
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
  assert.match(r.stdout, /^90 pages done, 3 errors \(ROBOTS_DISALLOWED 3\)/m);
  assert.match(r.stderr, /all 2 nodes ended: 90 pages/);
  assert.match(r.stdout, /browse it:/);
  const files = await listFiles(data);
  assert.equal(files.filter((f) => f.startsWith('html/')).length, 90);
  assert.equal(files.filter((f) => f.startsWith('links/')).length, 90);
});
