import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { until } from './until.js';

const SSHD = '/usr/sbin/sshd';

/**
 * A private sshd on this machine that acts as several ssh hosts
 * (docs/operations.md, "On several machines with launch.sh"): it listens on one port of several loopback addresses,
 * and a session that comes in on an address gets its own HOME (`homes[i]`), so each
 * "host" has its own `~`. Its own host key and client key, in a temp dir; the system's sshd
 * and ssh configuration are never read or changed.
 */
export interface LoopbackSshd {
  /** The addresses, one per host: what `ssh -F config` is given as the host name. */
  readonly hosts: string[];
  /** Each host's HOME, by index of `hosts`. */
  readonly homes: string[];
  /** An ssh command that reaches the hosts without a prompt: `ssh -n -F <config>`. */
  readonly ssh: string;
  /** The ssh client configuration file (port, key, pinned host key). */
  readonly config: string;
  /** Stops sshd by its pid and removes the temp dir; idempotent. */
  stop(): Promise<void>;
}

/** Why this machine cannot run a private sshd, or undefined when it can. */
export function sshdMissing(): string | undefined {
  try {
    accessSync(SSHD, constants.X_OK);
  } catch {
    return `${SSHD} is not installed (Debian: apt-get install openssh-server)`;
  }
  if (!existsSync('/run/sshd') && process.getuid?.() !== 0) return '/run/sshd is missing and only root can create it';
  return undefined;
}

/** A pid's process is running (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(') ') + 2));
  } catch {
    return false;
  }
}

/** Starts sshd on `addresses` (loopback addresses, e.g. 127.0.0.2) at one free port. */
export async function startLoopbackSshd(addresses: readonly string[]): Promise<LoopbackSshd> {
  const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-sshd-'));
  const key = (name: string): string => {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `mountcrawl-test-${name}`, '-f', join(dir, name)]);
    return join(dir, name);
  };
  const hostKey = key('host_key');
  const clientKey = key('client_key');
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${clientKey}.pub`));
  const homes = addresses.map((_, i) => join(dir, `home${i + 1}`));
  for (const home of homes) mkdirSync(home);
  if (!existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 });
  const user = userInfo().username;

  let pid: number | undefined;
  let port = 0;
  for (let tries = 0; pid === undefined; tries++) {
    port = 20_000 + Math.floor(Math.random() * 40_000);
    const config = join(dir, 'sshd_config');
    writeFileSync(
      config,
      [
        ...addresses.map((a) => `ListenAddress ${a}`),
        `Port ${port}`,
        `HostKey ${hostKey}`,
        `PidFile ${join(dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
        `AllowUsers ${user}`,
        'PermitRootLogin prohibit-password',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'StrictModes no',
        'AllowTcpForwarding no',
        'X11Forwarding no',
        'PrintMotd no',
        'LogLevel ERROR',
        // Each address is another "machine": its sessions get their own HOME.
        ...addresses.flatMap((a, i) => [`Match LocalAddress ${a}`, `  SetEnv HOME=${homes[i]}`]),
        '',
      ].join('\n'),
    );
    const child = spawn(SSHD, ['-D', '-f', config, '-E', join(dir, 'sshd.log')], { stdio: 'ignore' });
    let exited = false;
    child.once('exit', () => (exited = true));
    await until(() => exited || existsSync(join(dir, 'sshd.pid')), 10_000).catch(() => undefined);
    if (!exited && existsSync(join(dir, 'sshd.pid'))) {
      pid = child.pid;
      child.unref();
    } else if (tries === 10) {
      if (!exited) child.kill();
      const log = existsSync(join(dir, 'sshd.log')) ? readFileSync(join(dir, 'sshd.log'), 'utf8').trim() : '';
      await rm(dir, { recursive: true, force: true });
      throw new Error(`sshd did not start: ${log}`);
    }
    // A taken port makes sshd exit at once: another port is tried.
  }

  const hostLine = readFileSync(`${hostKey}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
  writeFileSync(join(dir, 'known_hosts'), addresses.map((a) => `[${a}]:${port} ${hostLine}\n`).join(''));
  const config = join(dir, 'ssh_config');
  writeFileSync(
    config,
    [
      `Host ${addresses.join(' ')}`,
      `  Port ${port}`,
      `  User ${user}`,
      `  IdentityFile ${clientKey}`,
      '  IdentitiesOnly yes',
      `  UserKnownHostsFile ${join(dir, 'known_hosts')}`,
      '  GlobalKnownHostsFile /dev/null',
      '  StrictHostKeyChecking yes',
      '  BatchMode yes',
      '  ConnectTimeout 10',
      '',
    ].join('\n'),
  );

  let stopping: Promise<void> | undefined;
  const sshdPid = pid;
  return {
    hosts: [...addresses],
    homes,
    ssh: `ssh -n -F ${config}`,
    config,
    stop: () => {
      stopping ??= (async () => {
        if (alive(sshdPid)) process.kill(sshdPid, 'SIGTERM');
        await until(() => !alive(sshdPid), 10_000);
        await rm(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
