import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, runCli, tempDir } from '../support/cli.js';
import { pageRoute, requestedPaths, startRoutedSite } from '../support/routed-site.js';

describe('forgiving input', { timeout: 60_000 }, () => {
  let site: LoopbackSite;
  let tmp: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    site = await startRoutedSite([{ '/': pageRoute([]), '/a': pageRoute([]) }]);
    tmp = await tempDir();
  });
  after(async () => {
    await site.close();
    await tmp.cleanup();
  });

  test('a seeds file: comments and blank lines ignored, a bad line reported with file:line and skipped, the good ones crawled', async () => {
    const file = join(tmp.path, 'seeds.txt');
    const host = site.hosts[0]!;
    await writeFile(
      file,
      `# seeds\n\n${site.url(0, '/')} # the home page\nnot a url\n${host.address}:${host.port}/a\n${site.url(0, '/a')}\n`,
    );
    const r = await runCli(['crawl', '--seeds-file', file, '--data', join(tmp.path, 'd1'), ...FAST]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `^mountcrawl: warning: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4: "not a url": not a valid absolute URL; skipped$`,
        'm',
      ),
      r.stderr,
    );
    assert.match(r.stderr, /:5: "127\.0\.0\.\d+:\d+\/a": .*\(did you mean http:\/\/127\.0\.0\.\d+:\d+\/a\?\); skipped$/m, r.stderr);
    assert.deepEqual(requestedPaths(site, 0), ['/', '/a', '/robots.txt'], 'no "/%20" seed from the comment');
  });

  test('a seeds file with no usable line: BAD_SEEDS_FILE', async () => {
    const file = join(tmp.path, 'bad-seeds.txt');
    await writeFile(file, '# only junk\nnope\n');
    const r = await runCli(['crawl', '--seeds-file', file, '--data', join(tmp.path, 'd2'), ...FAST]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^mountcrawl: BAD_SEEDS_FILE: .*bad-seeds\.txt: none of its 1 lines is a URL that can be crawled$/m);
  });

  test('a seed on the command line without a scheme: BAD_URL with a hint', async () => {
    const r = await runCli(['crawl', '127.0.0.5:8000', '--data', join(tmp.path, 'd3'), ...FAST]);
    assert.equal(r.code, 2);
    assert.match(r.stderr.trim(), /^mountcrawl: BAD_URL: "127\.0\.0\.5:8000": .*\(did you mean http:\/\/127\.0\.0\.5:8000\/\?\)$/);
  });

  test('no arguments at all: the help, and a usage exit code', async () => {
    const r = await runCli([]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^Usage: mountcrawl \[options\] \[command\]/);
    assert.match(r.stderr, /crawl \[options\] \[urls\.\.\.\]/);
  });

  test("a missing argument points at the subcommand's own --help", async () => {
    const r = await runCli(['locate']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.trim(), /^mountcrawl: BAD_OPTION: missing required argument 'url' \(see mountcrawl locate --help\)$/);
  });

  test('a hook file that does not load: the message names the file, never a path inside the package', async () => {
    const bad = join(tmp.path, 'bad-hook.mjs');
    await writeFile(bad, 'export function filter(u) {\n  return u x;\n}\n');
    for (const [hook, expected] of [
      [join(tmp.path, 'missing-hook.mjs'), /no such file: .*missing-hook\.mjs$/],
      [bad, /SyntaxError in .*bad-hook\.mjs: /],
    ] as const) {
      const r = await runCli(['crawl', site.url(0, '/'), '--data', join(tmp.path, 'd4'), '--hook', hook, ...FAST]);
      assert.equal(r.code, 2);
      assert.match(r.stderr.trim(), expected);
      assert.doesNotMatch(r.stderr, /dist\/src|hooks\.js/);
    }
  });
});
