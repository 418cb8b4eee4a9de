import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { FAST, tempDir } from '../support/cli.js';
import { pageRoute, requestedPaths, startRoutedSite } from '../support/routed-site.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface PackedFile {
  readonly path: string;
}

test('npm pack ships what --help and README point at, a LICENSE matching package.json, and builds before packing, not at install', {
  timeout: 120_000,
}, async () => {
  const pkg = JSON.parse(await readFile(`${ROOT}package.json`, 'utf8')) as { license: string; scripts: Record<string, string> };
  assert.equal(pkg.scripts.prepare, undefined, 'no prepare script: nothing is compiled (or warned about) at install');
  assert.match(pkg.scripts.prepack ?? '', /npm run build/);
  // dist/ is built already (npm test builds): list the package without running scripts again.
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT });
  const files = new Set((JSON.parse(stdout) as { files: PackedFile[] }[])[0]!.files.map((f) => f.path));
  for (const f of [
    'LICENSE',
    'CHANGELOG.md',
    'README.md',
    'docs/errors.md',
    'docs/options.md',
    'docs/hooks.md',
    'bin/mountcrawl.js',
    'dist/src/cli/main.js',
  ]) {
    assert.ok(files.has(f), `${f} is not in the package`);
  }
  assert.ok(![...files].some((f) => f.startsWith('dist/test/') || f.startsWith('src/')), 'no tests or sources');
  // A source map in the package resolves: it carries the sources it names (src/ is not shipped).
  const maps = [...files].filter((f) => f.endsWith('.map'));
  assert.ok(maps.length > 0);
  for (const m of maps) {
    const map = JSON.parse(await readFile(join(ROOT, m), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
    assert.equal(
      map.sourcesContent?.filter((c) => typeof c === 'string').length,
      map.sources.length,
      `${m} names sources the package does not hold`,
    );
  }
  assert.equal(pkg.license, 'MIT');
  assert.match(await readFile(`${ROOT}LICENSE`, 'utf8'), /^MIT License\n/);
  assert.match(await readFile(`${ROOT}.gitignore`, 'utf8'), /^\*\.tgz$/m);
});

test('the npm pack tarball installs globally and runs: --version and a small crawl', { timeout: 300_000 }, async (t) => {
  const run = promisify(execFile);
  const tmp = await tempDir('mountcrawl-global-');
  try {
    // The dependencies come from the registry: without it there is nothing to test here (but in CI).
    const ping = await run('npm', ['ping'], { timeout: 30_000 }).then(
      () => true,
      () => false,
    );
    if (!ping) {
      assert.ok(process.env.CI !== 'true', 'the npm registry is unreachable, and CI needs this test');
      t.skip('the npm registry is unreachable (npm ping failed): the global install from npm pack is not tested');
      return;
    }
    // dist/ is built already (npm test builds): pack it without running prepack again.
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp.path], { cwd: ROOT });
    const tarball = join(tmp.path, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
    const prefix = join(tmp.path, 'prefix');
    await run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', tarball], { timeout: 240_000 });
    const bin = join(prefix, 'bin', 'mountcrawl');
    const pkg = JSON.parse(await readFile(`${ROOT}package.json`, 'utf8')) as { version: string };
    // Run from the temporary directory, so nothing of this checkout is found by accident.
    const version = await run(bin, ['--version'], { cwd: tmp.path });
    assert.equal(version.stdout.trim(), pkg.version);
    const site = await startRoutedSite([{ '/': pageRoute(['/a.html']), '/a.html': pageRoute() }]);
    try {
      const env = { ...process.env, MOUNTCRAWL_DATA: '', HTTP_PROXY: '', http_proxy: '' };
      const crawl = await run(bin, ['crawl', site.url(0, '/'), '--data', join(tmp.path, 'data'), ...FAST], {
        cwd: tmp.path,
        env,
        timeout: 60_000,
      });
      assert.match(crawl.stderr, /done \(complete\): 2 pages/);
      assert.deepEqual(requestedPaths(site, 0), ['/', '/a.html', '/robots.txt']);
    } finally {
      await site.close();
    }
  } finally {
    await tmp.cleanup();
  }
});
