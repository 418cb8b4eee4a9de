import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, FAST, runCli, tempDir } from '../support/cli.js';
import { listFiles } from '../support/data-files.js';

/** One line on stderr, of the form `mountcrawl: CODE: ...`, and no stack trace. */
function assertOneLine(stderr: string, code: string): void {
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, `expected one line, got:\n${stderr}`);
  assert.match(lines[0]!, new RegExp(`^mountcrawl: ${code}: `));
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
}

describe('bad input gets one clear line and a non-zero exit', () => {
  let tmp: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    tmp = await tempDir();
  });
  after(async () => {
    await tmp.cleanup();
  });

  test('an invalid URL', async () => {
    const r = await runCli(['crawl', 'not a url', '--data', join(tmp.path, 'd1'), ...FAST]);
    assert.equal(r.code, 2);
    assertOneLine(r.stderr, 'BAD_URL');
    assert.deepEqual(await listFiles(join(tmp.path, 'd1')), [], 'nothing written');
  });

  test('a URL of another scheme', async () => {
    const r = await runCli(['crawl', 'ftp://example.com/', '--data', join(tmp.path, 'd1')]);
    assert.equal(r.code, 2);
    assertOneLine(r.stderr, 'BAD_URL');
  });

  test('an unknown option', async () => {
    const r = await runCli(['crawl', 'http://127.0.0.1:9/', '--no-such-option']);
    assert.equal(r.code, 2);
    assertOneLine(r.stderr, 'BAD_OPTION');
    assert.match(r.stderr, /--no-such-option/);
  });

  test('a bad option value', async () => {
    for (const args of [
      ['--per-host', '0'],
      ['--timeout', 'soon'],
      ['--max-bytes', '12 parsecs'],
      ['--scope', 'galaxy'],
      ['--include', '(['],
      ['--node-id', '../evil'],
    ]) {
      const r = await runCli(['crawl', 'http://127.0.0.1:9/', ...args]);
      assert.equal(r.code, 2, args.join(' '));
      assertOneLine(r.stderr, 'BAD_OPTION');
    }
  });

  test('a data directory that cannot be created', async () => {
    const file = join(tmp.path, 'a-file');
    await writeFile(file, 'x');
    const r = await runCli(['crawl', 'http://127.0.0.1:9/', '--data', join(file, 'data'), ...FAST]);
    assert.equal(r.code, 3);
    assertOneLine(r.stderr, 'DATA_DIR_UNUSABLE');
  });

  test('a non-empty directory that is not a data directory', async () => {
    const dir = join(tmp.path, 'home');
    await mkdir(dir);
    await writeFile(join(dir, 'thesis.tex'), 'precious');
    const r = await runCli(['crawl', 'http://127.0.0.1:9/', '--data', dir, ...FAST]);
    assert.equal(r.code, 3);
    assertOneLine(r.stderr, 'NOT_A_DATA_DIR');
    assert.deepEqual(await listFiles(dir), ['thesis.tex'], 'nothing written into it');
  });

  test('nothing to crawl: refused before the data directory is made or anything else is printed', async () => {
    for (const processes of [[], ['--processes', '2']]) {
      const data = join(tmp.path, `empty${processes.length}`);
      const r = await runCli(['crawl', '--data', data, ...processes, ...FAST]);
      assert.equal(r.code, 2);
      assertOneLine(r.stderr, 'NO_SEEDS');
      assert.ok(!existsSync(data), `${data} was made for a crawl with nothing to crawl`);
    }
  });

  test('--include or --exclude that leaves out every seed: SEEDS_FILTERED before anything is made', async () => {
    for (const filter of [
      ['--include', '/only-this/'],
      ['--exclude', '127\\.0\\.0\\.1'],
    ]) {
      const data = join(tmp.path, `filtered${filter[0]}`);
      const r = await runCli(['crawl', 'http://127.0.0.1:9/a', 'http://127.0.0.1:9/b', '--data', data, ...filter, ...FAST]);
      assert.equal(r.code, 2, filter.join(' '));
      assertOneLine(r.stderr, 'SEEDS_FILTERED');
      assert.match(r.stderr, new RegExp(`${filter[0]} leaves out all 2 seeds`));
      assert.ok(!existsSync(data), `${data} was made`);
    }
  });

  test('an option-like word as the value of a path or URL option is refused, unless written with =', async () => {
    for (const args of [
      ['crawl', 'http://127.0.0.1:9/', '--data', '--warc'],
      ['crawl', 'http://127.0.0.1:9/', '--data', join(tmp.path, 'd9'), '--seeds-file', '--watch'],
      ['crawl', 'http://127.0.0.1:9/', '--data', join(tmp.path, 'd9'), '--proxy', '-x'],
      ['status', '--data', '--json'],
      ['report', '--data', join(tmp.path, 'd9'), '--out', '--json'],
      ['crawl', 'http://127.0.0.1:9/', '--data', join(tmp.path, 'd9'), '--hook', '--warc'],
    ]) {
      const r = await runCli(args, { env: { MOUNTCRAWL_DATA: '' } });
      assert.equal(r.code, 2, args.join(' '));
      assertOneLine(r.stderr, 'BAD_OPTION');
      const [flag, value] = args.slice(-2);
      assert.match(
        r.stderr,
        new RegExp(
          `${flag} ${value}: ${value} looks like an option, not a (directory|file name|URL) \\(write ${flag}=${value} if you mean it\\)`,
        ),
      );
    }
    // Nothing was made under the option-like name in the working directory.
    assert.ok(!existsSync(join(process.cwd(), '--warc')), 'a directory named --warc was made');
    // With = the value is taken as written.
    const odd = join(tmp.path, '--odd');
    const r = await runCli(['crawl', `--data=${odd}`, ...FAST]);
    assert.equal(r.code, 2);
    assertOneLine(r.stderr, 'NO_SEEDS');
    assert.ok(r.stderr.includes(`--data ${odd}\``), `--data=${odd} was not taken as written: ${r.stderr}`);
  });

  test('a mistyped command: one line with the suggestion; key of a bad URL: the words crawl gives', async () => {
    const typo = await runCli(['crawll']);
    assert.equal(typo.code, 2);
    assertOneLine(typo.stderr, 'BAD_OPTION');
    assert.match(typo.stderr, /unknown command 'crawll'; did you mean crawl\? \(see mountcrawl --help\)/);
    const key = await runCli(['key', 'notaurl']);
    const crawl = await runCli(['crawl', 'notaurl', '--data', join(tmp.path, 'never')]);
    assert.equal(key.code, 2);
    assertOneLine(key.stderr, 'BAD_URL');
    assert.equal(key.stderr, crawl.stderr);
    assert.match(key.stderr, /did you mean http:\/\/notaurl\/\?/);
  });

  test('status of a directory that does not exist', async () => {
    const r = await runCli(['status', '--data', join(tmp.path, 'nowhere')]);
    assert.equal(r.code, 3);
    assertOneLine(r.stderr, 'NO_DATA_DIR');
  });
});

describe('output into a pipe that closes early', () => {
  test('`mountcrawl ... | head` ends quietly with exit 0, no EPIPE stack trace', async () => {
    // The reader is gone before the first write, as when `head` has read its lines.
    const child = spawn(process.execPath, [BIN, 'key', 'http://example.com/'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(stderr, '');
    assert.equal(code, 0);
  });
});
