import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * The simulated LAN of `npm run bench:cluster` (docs/benchmarks.md): one export served by one
 * private sshd (mount-example/sshfs-pair.sh), and one sshfs mount per simulated machine whose
 * TCP connection goes through a delaying relay of the bench's own (bench/delay-relay.py), so
 * that every SFTP round trip pays the link's delay in each direction.
 *
 * What it counts per mount: bytes through the relay in each direction (SSH-encrypted SFTP:
 * file contents plus protocol and SSH framing) and every SFTP request the mount's sshfs sent,
 * by type, from sshfs's own request log (`-o sshfs_debug`: one line per request and per
 * reply, with the bytes of each READ reply).
 */
export interface MountCounts {
  /** SFTP requests by type (OPEN, CLOSE, READ, WRITE, LSTAT, RENAME, OPENDIR, READDIR, ...). */
  readonly ops: Record<string, number>;
  /** All SFTP requests. */
  readonly requests: number;
  /** File bytes read (the DATA replies to READ requests). */
  readonly readBytes: number;
  /** Bytes through the relay: client to server (writes and requests), server to client. */
  readonly up: number;
  readonly down: number;
}

const SCRIPT = fileURLToPath(new URL('../../mount-example/sshfs-pair.sh', import.meta.url));
const RELAY = fileURLToPath(new URL('../../bench/delay-relay.py', import.meta.url));
const MISSING = 3;

/** What this machine lacks for the cluster bench, or undefined when it has everything. */
export async function clusterMissing(python: string): Promise<string | undefined> {
  const check = spawnSync('bash', [SCRIPT, 'check'], { encoding: 'utf8', timeout: 10_000 });
  if (check.status === MISSING) return check.stdout.trim();
  if (check.status !== 0) return `sshfs-pair.sh check failed: ${check.stderr.trim()}`;
  const py = spawnSync(python, ['-c', 'import socket, threading'], { encoding: 'utf8' });
  if (py.status !== 0) return `no usable ${python} for the delaying relay (install the Debian package python3)`;
  return undefined;
}

function script(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [SCRIPT, ...args], { timeout: 60_000, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`sshfs-pair.sh ${args[0]} failed: ${stderr.trim().split('\n').pop() ?? err.message}`));
      else resolve(stdout);
    });
  });
}

/** The sshd, the relay and the mounts; `stop()` undoes all of it and may be called any number of times. */
export class ClusterMounts {
  readonly mounts: string[] = [];
  readonly dir: string;
  readonly #relay: ChildProcess;
  readonly #replies: { resolve: (line: string) => void; reject: (err: Error) => void }[] = [];
  /** Offsets into each sshfs log: counts are taken from there on (`mark()`). */
  #marks: number[] = [];
  #stopped: Promise<void> | undefined;

  private constructor(dir: string, relay: ChildProcess) {
    this.dir = dir;
    this.#relay = relay;
    createInterface({ input: relay.stdout! }).on('line', (line) => this.#replies.shift()?.resolve(line));
    relay.on('exit', () => {
      for (const r of this.#replies.splice(0)) r.reject(new Error('the delaying relay exited'));
    });
  }

  /** Starts sshd, a relay of `delayMs` per direction and `n` mounts through it. */
  static async start(n: number, delayMs: number, python: string): Promise<ClusterMounts> {
    const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-cluster-'));
    await script(['start', dir, '0']);
    const port = readFileSync(join(dir, 'port'), 'utf8').trim();
    const relay = spawn(python, [RELAY, '--upstream', `127.0.0.1:${port}`, '--delay-ms', String(delayMs), '--listen', String(n)], {
      stdio: ['pipe', 'pipe', 'inherit'],
      // Its own process group: a Ctrl-C meant for the bench must not cut the mounts' links
      // before they are unmounted (it exits when the bench closes its stdin, or dies).
      detached: true,
    });
    const m = new ClusterMounts(dir, relay);
    running.add(m);
    try {
      const { ports } = JSON.parse(await m.#ask(undefined)) as { ports: number[] };
      for (let i = 0; i < n; i++) {
        const out = await script(['mount', dir, String(i + 1), String(ports[i])], { SSHFS_PAIR_MOUNT_OPTS: 'sshfs_debug' });
        m.mounts.push(out.trim());
      }
    } catch (err) {
      await m.stop();
      throw err;
    }
    return m;
  }

  /** The exported directory (the server's side, local). */
  get export(): string {
    return join(this.dir, 'export');
  }

  /** Sends a command to the relay (none: waits for its first line) and returns its answer. */
  #ask(command: string | undefined): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.#relay.exitCode !== null) return reject(new Error('the delaying relay exited'));
      this.#replies.push({ resolve, reject });
      if (command !== undefined) this.#relay.stdin!.write(`${command}\n`);
    });
  }

  /**
   * A fault of mount `i`'s link (the relay's commands, bench/delay-relay.py): `cut` drops its
   * connections and refuses new ones, `restore` accepts them again, `hold` stalls every byte
   * for `ms`.
   */
  async fault(kind: 'cut' | 'restore' | 'hold', i: number, ms = 0): Promise<void> {
    await this.#ask(kind === 'hold' ? `hold ${i} ${ms}` : `${kind} ${i}`);
  }

  /** Starts counting afresh (the counts of `counts()` are since the last mark). */
  async mark(): Promise<MountCounts[]> {
    const c = await this.counts();
    this.#marks = await Promise.all(this.mounts.map((_, i) => readFile(this.#log(i)).then((b) => b.length)));
    return c;
  }

  #log(i: number): string {
    return join(this.dir, `sshfs-mnt${i + 1}.log`);
  }

  /** Counts per mount since the last `mark()` (bytes: totals, subtract the mark's). */
  async counts(): Promise<MountCounts[]> {
    const relay = JSON.parse(await this.#ask('stats')) as { stats: { up: number; down: number }[] };
    return Promise.all(
      this.mounts.map(async (_, i) => {
        const text = (await readFile(this.#log(i))).subarray(this.#marks[i] ?? 0).toString('latin1');
        const ops: Record<string, number> = {};
        let requests = 0;
        let readBytes = 0;
        for (const m of text.matchAll(/^\[\d+\] (\w+)$|^ +\[\d+\] +DATA +(\d+)bytes/gm)) {
          if (m[1] !== undefined) {
            ops[m[1]] = (ops[m[1]] ?? 0) + 1;
            requests++;
          } else readBytes += Number(m[2]);
        }
        return { ops, requests, readBytes, up: relay.stats[i]!.up, down: relay.stats[i]!.down };
      }),
    );
  }

  /** Unmounts, stops sshd and the relay, removes the temp directory. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      // Unmount while the relay still carries the mounts' connections: a mount whose link is
      // gone keeps reconnecting, and unmounting it is slow.
      await script(['stop', this.dir]).catch((err: Error) => process.stderr.write(`cluster bench: ${err.message}\n`));
      this.#relay.stdin!.end();
      if (this.#relay.exitCode === null) this.#relay.kill();
      running.delete(this);
      if (!mountedUnder(this.dir)) await rm(this.dir, { recursive: true, force: true });
    })();
    return this.#stopped;
  }

  /** The synchronous last resort of an exiting process. */
  stopSync(): void {
    spawnSync('bash', [SCRIPT, 'stop', this.dir], { stdio: 'ignore', timeout: 60_000 });
    this.#relay.stdin!.destroy();
    if (this.#relay.exitCode === null) this.#relay.kill();
    if (!mountedUnder(this.dir) && existsSync(this.dir)) rmSync(this.dir, { recursive: true, force: true });
  }
}

const running = new Set<ClusterMounts>();
process.on('exit', () => {
  for (const m of running) m.stopSync();
});

function mountedUnder(dir: string): boolean {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .some((line) => {
      const point = (line.split(' ')[1] ?? '').replace(/\\040/g, ' ');
      return point === dir || point.startsWith(`${dir}/`);
    });
}
