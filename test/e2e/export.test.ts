import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { BIN, FAST, runCli, tempDir } from '../support/cli.js';
import { pageRoute, startRoutedSite } from '../support/routed-site.js';

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

describe('mountcrawl export --jsonl', { timeout: 60_000 }, () => {
  let site: LoopbackSite;
  let tmp: { path: string; cleanup: () => Promise<void> };
  let data: string;
  before(async () => {
    site = await startRoutedSite([{ '/': pageRoute(['/a', '/b', '/gone']), '/a': pageRoute(['/']), '/b': pageRoute([]) }]);
    tmp = await tempDir();
    data = `${tmp.path}/crawl-data`;
    const r = await runCli(['crawl', site.url(0, '/'), '--data', data, ...FAST]);
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await site.close();
    await tmp.cleanup();
  });

  test('one JSON object per line: the links records, and the errs records with --errors', async () => {
    const links = await runCli(['export', '--jsonl', '--data', data]);
    assert.equal(links.code, 0, links.stderr);
    const rows = links.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { url: string; code?: string });
    assert.deepEqual(
      rows.map((r) => r.url).sort(),
      ['/', '/a', '/b'].map((p) => site.url(0, p)),
    );
    const all = await runCli(['export', '--errors', '--data', data]);
    const errs = all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { url: string; code?: string })
      .filter((r) => r.code !== undefined);
    assert.deepEqual(
      errs.map((r) => [r.url, r.code]),
      [[site.url(0, '/gone'), 'HTTP_404']],
    );
    const none = await runCli(['export', '--host', 'nosuchhost', '--data', data]);
    assert.equal(none.stdout, '');
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^mountcrawl: NO_SUCH_HOST: no host directory "nosuchhost" in .*\n$/);
    // The host name without its port: one line that names the directory meant.
    const hostDir = site.hosts[0]!.hostDir;
    const typed = hostDir.replace(/_\d+$/, '');
    const close = await runCli(['export', '--host', typed, '--data', data]);
    assert.equal(close.code, 2);
    assert.equal(close.stderr.trim().split('\n').length, 1, close.stderr);
    assert.ok(close.stderr.includes(`did you mean ${hostDir}?`), close.stderr);
  });

  test("README's examples work verbatim (with this crawl's host directory for example.com)", async () => {
    const readme = await readFile(README, 'utf8');
    const examples = readme.split('\n').filter((l) => l.startsWith('$ npx mountcrawl export'));
    assert.ok(examples.length >= 4, 'README has export examples');
    const hostDir = site.hosts[0]!.hostDir;
    for (const example of examples) {
      const command = example
        .slice(2)
        .replace(/ {2,}# .*$/, '')
        .replaceAll('npx mountcrawl', `${process.execPath} ${BIN}`)
        .replaceAll('example.com', hostDir);
      const { stdout } = await promisify(execFile)('bash', ['-c', command], {
        cwd: tmp.path,
        env: { ...process.env, MOUNTCRAWL_DATA: '' },
      });
      assert.notEqual(stdout.trim(), '', `no output from: ${example}`);
      if (example.includes('uniq -c')) assert.match(stdout, /1 HTTP_404/);
      if (example.includes('wc -l')) assert.equal(stdout.trim(), '4', example);
      // Broken links with the page they are on (the errs record's referrer, docs/protocol.md).
      if (example.includes('.referrer')) assert.equal(stdout.trim(), `HTTP_404  ${site.url(0, '/gone')}  on ${site.url(0, '/')}`, example);
    }
  });
});
