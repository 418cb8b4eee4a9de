import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface PackedFile {
  readonly path: string;
}

test('npm pack ships what --help and README point at, a LICENSE matching package.json, and builds before packing, not at install', { timeout: 120_000 }, async () => {
  const pkg = JSON.parse(await readFile(`${ROOT}package.json`, 'utf8')) as { license: string; scripts: Record<string, string> };
  assert.equal(pkg.scripts.prepare, undefined, 'no prepare script: nothing is compiled (or warned about) at install');
  assert.match(pkg.scripts.prepack ?? '', /npm run build/);
  // dist/ is built already (npm test builds): list the package without running scripts again.
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT });
  const files = new Set((JSON.parse(stdout) as { files: PackedFile[] }[])[0]!.files.map((f) => f.path));
  for (const f of ['LICENSE', 'CHANGELOG.md', 'README.md', 'docs/errors.md', 'docs/options.md', 'docs/hooks.md', 'bin/mountcrawl.js', 'dist/src/cli/main.js']) {
    assert.ok(files.has(f), `${f} is not in the package`);
  }
  assert.ok(![...files].some((f) => f.startsWith('dist/test/') || f.startsWith('src/')), 'no tests or sources');
  assert.equal(pkg.license, 'MIT');
  assert.match(await readFile(`${ROOT}LICENSE`, 'utf8'), /^MIT License\n/);
  assert.match(await readFile(`${ROOT}.gitignore`, 'utf8'), /^\*\.tgz$/m);
});
