import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { generatedSite } from '../../src/site/generated-site.js';
import { LoopbackSite } from '../../src/site/site-server.js';
import { BIN, tempDir } from '../support/cli.js';
import { alive, sshdMissing, startLoopbackSshd, type LoopbackSshd } from '../support/loopback-sshd.js';
import { until } from '../support/until.js';

/** The launcher, found from this file: dist/test/e2e/ -> repository root. */
const LAUNCH = fileURLToPath(new URL('../../../mount-example/launch.sh', import.meta.url));

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function launch(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile('bash', [LAUNCH, ...args], { env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
  });
}

/** The lines of `out` that start with `host: `, without it. */
const linesOf = (out: string, host: string): string[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith(`${host}: `))
    .map((l) => l.slice(host.length + 2));

// mount-example/launch.sh (docs/operations.md, "On several machines with launch.sh").
describe('launch.sh: bad input', () => {
  const cases: [string[], string][] = [
    [[], 'usage: launch.sh start|stop|status DATA_DIR host1 [host2 ...] [-- crawl options and URLs (start only)]'],
    [['restart', '/d', 'h'], 'usage: launch.sh start|stop|status DATA_DIR host1 [host2 ...] [-- crawl options and URLs (start only)]'],
    [['start', '/d'], 'usage: launch.sh start|stop|status DATA_DIR host1 [host2 ...] [-- crawl options and URLs (start only)]'],
    [['start', 'data', 'h'], "DATA_DIR must be an absolute path (the same on every machine), not 'data'"],
    [['start', '/d', 'h', '--delay', '0'], "host '--delay' begins with '-': crawl options go after --"],
    [['start', '/d', 'h1', 'h1'], "host 'h1' is given twice"],
    [['start', '/d', 'h;rm'], "host 'h;rm' is no ssh host name"],
    [['stop', '/d', 'h', '--', '--delay', '0'], 'stop takes no crawl options (nothing after --)'],
  ];
  for (const [args, message] of cases) {
    test(`launch.sh ${args.join(' ')}: one line, exit 2`, async () => {
      const r = await launch(args);
      assert.equal(r.code, 2);
      assert.equal(r.stderr, `launch.sh: ${message}\n`);
      assert.equal(r.stdout, '');
    });
  }
  test('a timeout that is no number: one line, exit 2', async () => {
    const r = await launch(['stop', '/d', 'h'], { STOP_TIMEOUT: '1m' });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "launch.sh: STOP_TIMEOUT must be a whole number of seconds, not '1m'\n");
  });
});

describe('launch.sh: start, status and stop a crawl on three ssh hosts', { timeout: 240_000 }, () => {
  const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
  let sshd: LoopbackSshd | undefined;
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let env: NodeJS.ProcessEnv;
  /** Pid files (and their nodes) of each host: launch.sh keeps them in LOG_DIR, ~/log here. */
  const pidFile = (i: number): string => join(sshd!.homes[i]!, 'log', `mountcrawl-${HOSTS[i]}.pid`);
  const exitFile = (i: number): string => join(sshd!.homes[i]!, 'log', `mountcrawl-${HOSTS[i]}.exit`);
  const pids: number[] = [];
  const cleanups: (() => void)[] = [];

  before(async () => {
    const missing = sshdMissing();
    if (missing !== undefined) {
      assert.notEqual(process.env.CI, 'true', `sshd is installed in CI (.ci/run): ${missing}`);
      return;
    }
    sshd = await startLoopbackSshd(HOSTS);
    let started: LoopbackSite | undefined;
    const handle = generatedSite({ hosts: 3, pagesPerHost: 400, linksPerPage: 4 }, () => started!.hosts);
    started = await LoopbackSite.start({ hosts: 3, latencyMs: 5, handle });
    site = started;
    data = await tempDir();
    // mountcrawl behind a shell that does not pass signals on, as `npx mountcrawl` is: stop
    // must reach the node all the same (its process group, as Ctrl-C in a terminal).
    const command = join(data.path, '..', `mountcrawl-launch-test-${process.pid}`);
    writeFileSync(command, `#!/bin/sh\n${process.execPath} ${BIN} "$@"\n`, { mode: 0o755 });
    cleanups.push(() => rmSync(command, { force: true }));
    env = {
      SSH: sshd.ssh,
      MOUNTCRAWL: command,
      // REMOTE_DIR is ~ (each host's own HOME); the logs and pid files go to ~/log there.
      LOG_DIR: '~/log',
      STATUS_AFTER: '0',
      STOP_TIMEOUT: '60',
      MOUNTCRAWL_DATA: '',
      HTTP_PROXY: '',
      http_proxy: '',
    };
  });
  after(async () => {
    // Nodes a failed test left running: only the process groups launch.sh recorded (setsid).
    for (const pid of pids) if (alive(pid)) process.kill(-pid, 'SIGKILL');
    await site?.close();
    await data?.cleanup();
    for (const cleanup of cleanups) cleanup();
    await sshd?.stop();
  });

  test('start, status, stop; a second stop finds the node ended; a stale pid file is never acted on', async (t) => {
    if (sshd === undefined) return t.skip(`no sshd: ${sshdMissing()}`);
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const crawl = ['--delay', '100', '--heartbeat', '100', '--dead-after', '15000', '--concurrency', '4', ...seeds];
    const start = await launch(['start', data.path, ...HOSTS, '--', ...crawl], env);
    assert.equal(start.code, 0, start.stdout + start.stderr);
    for (const [i, host] of HOSTS.entries()) {
      const [started, running] = linesOf(start.stdout, host);
      assert.match(started ?? '', /^started, pid \d+, log .*\/home\d\/log\/mountcrawl-127\.0\.0\.\d\.log$/);
      assert.match(running ?? '', /^running, pid \d+, log /);
      const [pid, wrapper, recorded] = readFileSync(pidFile(i), 'utf8').trim().split(' ');
      assert.equal(recorded, data.path);
      assert.ok(Number(wrapper) > 0);
      pids.push(Number(pid));
      assert.ok(alive(Number(pid)), `${host}'s node runs`);
      assert.match(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /^\/bin\/sh\0.*mountcrawl-launch-test/);
    }
    assert.match(start.stdout, /^== .* status --data /m, 'the status of the share follows');

    // Pages are written by the three nodes.
    const pages = (): number =>
      existsSync(join(data.path, 'links'))
        ? readdirSync(join(data.path, 'links')).reduce((n, h) => n + readdirSync(join(data.path, 'links', h)).length, 0)
        : 0;
    await until(() => pages() >= 30, 60_000);

    const status = await launch(['status', data.path, ...HOSTS], env);
    assert.equal(status.code, 0, status.stdout + status.stderr);
    for (const [i, host] of HOSTS.entries())
      assert.deepEqual(linesOf(status.stdout, host), [
        `running, pid ${pids[i]}, log ${join(sshd.homes[i]!, 'log', `mountcrawl-${host}.log`)}`,
      ]);

    const stop = await launch(['stop', data.path, ...HOSTS], env);
    assert.equal(stop.code, 0, stop.stdout + stop.stderr);
    for (const [i, host] of HOSTS.entries()) {
      assert.match(linesOf(stop.stdout, host)[0] ?? '', /^stopped \(exit 130\), log /);
      assert.equal(alive(pids[i]!), false, `${host}'s node has ended`);
      assert.equal(existsSync(pidFile(i)), false, `${host}'s pid file is gone`);
      // SIGINT is Ctrl-C: the node finished its requests in flight and exited 130 (docs/errors.md).
      assert.match(readFileSync(exitFile(i), 'utf8'), /^130 \d{4}-\d\d-\d\dT/);
      assert.match(
        readFileSync(join(sshd.homes[i]!, 'log', `mountcrawl-${host}.log`), 'utf8'),
        /SIGINT: stopping after the requests in flight/,
      );
    }
    const crawled = pages();
    assert.ok(crawled >= 30 && crawled < 1200, `pages crawled: ${crawled}`);

    // A host whose node has already ended: said so, and stop still exits 0 (nothing is left to stop).
    const again = await launch(['stop', data.path, HOSTS[0]!], env);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(linesOf(again.stdout, HOSTS[0]!)[0] ?? '', /^not running: stopped at \S+ \(exit 130\)$/);
    const later = await launch(['status', data.path, ...HOSTS], env);
    assert.equal(later.code, 3, 'status exits 3 when a node does not run');
    assert.match(later.stdout, /^crawl +stopped with work left/m);

    // A pid file that names a live mountcrawl process launch.sh did not start (its parent is
    // not the recorded wrapper: a reused pid, a node started by hand): never signalled.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', 'mountcrawl'], { stdio: 'ignore' });
    t.after(() => other.kill());
    await until(() => alive(other.pid!) && readFileSync(`/proc/${other.pid}/cmdline`, 'utf8').includes('mountcrawl'));
    writeFileSync(pidFile(1), `${other.pid} 1 ${data.path}\n`);
    const stale = await launch(['stop', data.path, HOSTS[1]!], env);
    assert.equal(stale.code, 0, stale.stdout + stale.stderr);
    assert.match(linesOf(stale.stdout, HOSTS[1]!)[0] ?? '', /^not running: stopped at \S+ \(exit 130\)$/);
    assert.equal(alive(other.pid!), true, 'the other process was not signalled');
    assert.equal(existsSync(pidFile(1)), false, 'the stale pid file is removed');
    rmSync(exitFile(1));
    writeFileSync(pidFile(1), `${other.pid} 1 ${data.path}\n`);
    const staleOnly = await launch(['status', data.path, HOSTS[1]!], env);
    assert.equal(staleOnly.code, 3);
    assert.deepEqual(linesOf(staleOnly.stdout, HOSTS[1]!), [
      'not running: its pid file names no mountcrawl process this script started (stale, removed)',
    ]);
    assert.equal(alive(other.pid!), true);
    assert.equal(existsSync(pidFile(1)), false);
  });

  test('a node that does not end within STOP_TIMEOUT is named, exit 1; a host whose node runs is not started again', async (t) => {
    if (sshd === undefined) return t.skip(`no sshd: ${sshdMissing()}`);
    // A "mountcrawl" that ignores SIGINT (its status answers at once).
    const stubborn = join(data.path, '..', `mountcrawl-stubborn-${process.pid}`);
    writeFileSync(stubborn, '#!/bin/sh\n[ "$1" = status ] && exit 0\ntrap "" INT\nsleep 120\n', { mode: 0o755 });
    t.after(() => rmSync(stubborn, { force: true }));
    const own = { ...env, MOUNTCRAWL: stubborn, LOG_DIR: '~/stubborn', STOP_TIMEOUT: '1' };
    const host = HOSTS[2]!;
    const started = await launch(['start', data.path, host], own);
    assert.equal(started.code, 0, started.stdout + started.stderr);
    const pid = Number(/^started, pid (\d+)/.exec(linesOf(started.stdout, host)[0] ?? '')?.[1]);
    pids.push(pid);
    assert.ok(alive(pid));

    const again = await launch(['start', data.path, host], own);
    assert.equal(again.code, 1);
    assert.equal(linesOf(again.stdout, host)[0], `already running, pid ${pid}: not started again`);

    const stop = await launch(['stop', data.path, host], own);
    assert.equal(stop.code, 1, stop.stdout + stop.stderr);
    assert.deepEqual(linesOf(stop.stdout, host), [`did not end within 1s: pid ${pid} runs on (stop again to stop it at once)`]);
    assert.ok(alive(pid), 'left running: stop never kills');
    process.kill(-pid, 'SIGKILL');
    await until(() => !alive(pid));
  });

  test('a host that cannot be reached: said so, exit 1', async (t) => {
    if (sshd === undefined) return t.skip(`no sshd: ${sshdMissing()}`);
    // An alias for a port nothing listens on, ahead of the hosts of the test's sshd.
    const config = join(data.path, '..', `launch-ssh-config-${process.pid}`);
    writeFileSync(config, `Host nowhere\n  HostName 127.0.0.5\n  Port 9\nHost *\nInclude ${sshd.config}\n`);
    t.after(() => rmSync(config, { force: true }));
    const r = await launch(['status', data.path, HOSTS[0]!, 'nowhere'], { ...env, SSH: `ssh -n -F ${config}` });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(linesOf(r.stdout, HOSTS[0]!)[0] ?? '', /^not running: /);
    assert.match(linesOf(r.stdout, 'nowhere')[0] ?? '', /^unreachable \(ssh exit 255\): .*refused/);
  });
});
