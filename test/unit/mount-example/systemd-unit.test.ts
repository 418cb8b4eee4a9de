import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { DEFAULTS } from '../../../src/config/crawl-config.js';
import { ExitCode } from '../../../src/errors.js';

const UNIT = fileURLToPath(new URL('../../../../mount-example/mountcrawl@.service', import.meta.url));
const ERRORS_DOC = fileURLToPath(new URL('../../../../docs/errors.md', import.meta.url));
const BIN = fileURLToPath(new URL('../../../../bin/mountcrawl.js', import.meta.url));

/** The unit file's settings: section -> key -> values (a key may be given more than once). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section !== null) {
      current = new Map();
      sections.set(section[1]!, current);
      continue;
    }
    const eq = line.indexOf('=');
    assert.ok(current !== undefined && eq > 0, `not a setting of a section: ${line}`);
    const key = line.slice(0, eq);
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1)]);
  }
  return sections;
}

/** systemd's time span ("3min", "90s", "2min 30s") in seconds. */
function seconds(span: string): number {
  const units: Record<string, number> = { s: 1, sec: 1, min: 60, m: 60, h: 3600 };
  let total = 0;
  for (const [, n, unit] of span.matchAll(/(\d+)\s*([a-z]*)/g)) total += Number(n) * (units[unit || 's'] ?? Number.NaN);
  return total;
}

/**
 * What the service does after each exit code of src/errors.ts (docs/errors.md, "Exit codes"):
 * every code is in exactly one class, so a new code fails this test until it is placed.
 */
const CLEAN = [ExitCode.OK, ExitCode.INTERRUPTED, ExitCode.TERMINATED];
const RESTART = [ExitCode.MOUNT, ExitCode.INTERNAL];
const NO_RESTART = [ExitCode.USAGE, ExitCode.DATA_DIR, ExitCode.NOTHING_FETCHED, ExitCode.DATA_DIR_NOT_WRITABLE];

const numbers = (value: string | undefined): number[] =>
  (value ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
const sorted = (list: readonly number[]): number[] => [...list].sort((a, b) => a - b);

// mount-example/mountcrawl@.service (docs/operations.md, "The systemd way").
describe('mountcrawl@.service', () => {
  const unit = parseUnit(readFileSync(UNIT, 'utf8'));
  const service = unit.get('Service')!;
  const one = (key: string): string | undefined => {
    const values = service.get(key);
    assert.ok(values === undefined || values.length === 1, `${key} is given once`);
    return values?.[0];
  };

  test('every exit code of src/errors.ts is placed in one class', () => {
    assert.deepEqual(sorted([...CLEAN, ...RESTART, ...NO_RESTART]), sorted([...new Set(Object.values(ExitCode))]));
  });

  test('restarts after a crash, not after a code a restart cannot help, nor after a stop or the end of the crawl', () => {
    assert.equal(one('Restart'), 'on-failure');
    assert.deepEqual(numbers(one('RestartPreventExitStatus')), sorted(NO_RESTART));
    // 130 and 143 are how a node ends after SIGINT / SIGTERM (it exits with a code, not by the
    // signal): successful, so `systemctl stop` leaves the unit inactive, not failed.
    assert.deepEqual(numbers(one('SuccessExitStatus')), sorted([ExitCode.INTERRUPTED, ExitCode.TERMINATED]));
    for (const code of RESTART) {
      assert.ok(!numbers(one('RestartPreventExitStatus')).includes(code), `${code} restarts`);
      assert.ok(!numbers(one('SuccessExitStatus')).includes(code), `${code} is a failure`);
    }
  });

  test('the exit codes it names are the ones docs/errors.md explains', () => {
    const doc = readFileSync(ERRORS_DOC, 'utf8');
    const table = doc.slice(doc.indexOf('## Exit codes'));
    for (const code of [...numbers(one('RestartPreventExitStatus')), ...numbers(one('SuccessExitStatus'))]) {
      assert.match(table, new RegExp(`^\\| ${code} \\|`, 'm'), `docs/errors.md explains exit ${code}`);
    }
  });

  test('stops as Ctrl-C does, with time for the requests in flight, and needs the mount', () => {
    assert.equal(one('KillSignal'), 'SIGINT');
    // Only the main process: a supervisor passes the signal on once (a second one stops at once).
    assert.equal(one('KillMode'), 'mixed');
    assert.ok(seconds(one('TimeoutStopSec')!) >= 2 * (DEFAULTS.timeoutMs / 1000), 'longer than a request may take');
    assert.deepEqual(unit.get('Unit')!.get('RequiresMountsFor'), ['%f']);
    assert.match(one('ExecStart')!, /^\/\S+ crawl --data %f \$MOUNTCRAWL_OPTIONS$/);
  });

  test('systemd-analyze verify accepts it', (t) => {
    if (spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status !== 0) {
      // .ci/run installs it (Debian's systemd package): there, a skip would hide a broken unit.
      assert.notEqual(process.env.CI, 'true', 'systemd-analyze is missing under CI');
      return t.skip('systemd-analyze is not installed (apt-get install systemd)');
    }
    const dir = mkdtempSync(join(tmpdir(), 'mountcrawl-unit-'));
    try {
      // The command must exist to be verified: this checkout's, in place of the installed one.
      const text = readFileSync(UNIT, 'utf8').replace(/^ExecStart=\S+/m, `ExecStart=${BIN}`);
      writeFileSync(join(dir, 'mountcrawl@.service'), text);
      assert.ok(existsSync(BIN));
      const r = spawnSync('systemd-analyze', ['verify', join(dir, 'mountcrawl@mnt-crawl-data.service')], { encoding: 'utf8' });
      assert.equal(`${r.stdout}${r.stderr}`, '', 'no warning');
      assert.equal(r.status, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
