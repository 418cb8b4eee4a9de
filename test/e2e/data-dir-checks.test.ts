import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, FAST, runCli, tempDir, type CliResult } from '../support/cli.js';
import { listFiles } from '../support/data-files.js';

/** One line on stderr, of the form `mountcrawl: CODE: ...`, and no stack trace. */
function assertOneLine(stderr: string, code: string): string {
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, `expected one line, got:\n${stderr}`);
  assert.match(lines[0]!, new RegExp(`^mountcrawl: ${code}: `));
  return lines[0]!;
}

/**
 * Runs the CLI as user `nobody` when this process is root (as in CI: root writes
 * everywhere), else as ourselves: the data directory is made read-only either way.
 */
function runAsOther(args: readonly string[]): Promise<CliResult> {
  const root = process.getuid?.() === 0;
  const cmd = root ? 'setpriv' : process.execPath;
  const argv = root ? ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, BIN, ...args] : [BIN, ...args];
  const child = spawn(cmd, argv, { env: { ...process.env, MOUNTCRAWL_DATA: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

describe('one data-directory check for every command', () => {
  let tmp: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    tmp = await tempDir();
    await chmod(tmp.path, 0o755); // others (nobody) may look inside
  });
  after(async () => {
    await tmp.cleanup();
  });

  test('a data directory this user cannot write: its own exit code (77) and one line naming it', async () => {
    const data = join(tmp.path, 'readonly');
    const seeded = await runCli(['seed', 'http://127.0.0.1:9/', '--data', data]);
    assert.equal(seeded.code, 0, seeded.stderr);
    const before = await listFiles(data);
    for (const dir of ['', 'seeds', 'html', 'links', 'errs', 'hosts', 'nodes', 'robots']) await chmod(join(data, dir), 0o555);
    try {
      const r = await runAsOther(['crawl', 'http://127.0.0.1:9/', '--data', data, ...FAST]);
      assert.equal(r.code, 77, r.stderr);
      const line = assertOneLine(r.stderr, 'DATA_DIR_NOT_WRITABLE');
      assert.ok(line.includes(data), line);
      assert.doesNotMatch(line, /INTERNAL/);
      // Reading it is fine.
      const status = await runAsOther(['status', '--data', data, '--no-wait']);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /^pages {5}0 done/m);
    } finally {
      for (const dir of ['', 'seeds', 'html', 'links', 'errs', 'hosts', 'nodes', 'robots']) await chmod(join(data, dir), 0o755);
    }
    assert.deepEqual(await listFiles(data), before, 'nothing written');
  });

  test('status of a non-empty directory that is not a data directory: NOT_A_DATA_DIR, not "0 pages"', async () => {
    const dir = join(tmp.path, 'home');
    await mkdir(dir);
    await writeFile(join(dir, 'thesis.tex'), 'precious');
    const r = await runCli(['status', '--data', dir, '--no-wait']);
    assert.equal(r.code, 3, r.stdout);
    assertOneLine(r.stderr, 'NOT_A_DATA_DIR');
  });

  test('locate in a directory that does not exist: NO_DATA_DIR, not every file "missing"', async () => {
    const r = await runCli(['locate', 'http://example.com/', '--data', join(tmp.path, 'nowhere')]);
    assert.equal(r.code, 3, r.stdout);
    assertOneLine(r.stderr, 'NO_DATA_DIR');
  });

  test('crawl and status of a file say the same thing: it is not a directory', async () => {
    const file = join(tmp.path, 'a-file');
    await writeFile(file, 'x');
    for (const args of [
      ['crawl', 'http://127.0.0.1:9/', ...FAST],
      ['status', '--no-wait'],
      ['seed', 'http://127.0.0.1:9/'],
    ]) {
      const r = await runCli([...args, '--data', file]);
      assert.equal(r.code, 3, args[0]);
      const line = assertOneLine(r.stderr, 'DATA_DIR_UNUSABLE');
      assert.match(line, /is not a directory/, args[0]);
      assert.doesNotMatch(line, /EEXIST|mkdir/, args[0]);
    }
  });
});
