import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** One process of a measured run. */
export interface ProcessPeak {
  readonly pid: number;
  /** What the process is (`supervisor`, `node 1`, `wget`, ...). */
  readonly role: string;
  /** Peak resident set size (VmHWM), MiB. */
  readonly peakRssMb: number;
  /** user + system CPU seconds, as last seen in /proc (the last poll before it exited). */
  readonly cpuSeconds: number;
  /**
   * Set when only one poll saw the process (without /usr/bin/time: a process that ends within
   * one poll interval, such as wget on a tiny site, seen only as it starts): its peak and CPU
   * are unknown, not the tiny numbers of that one look.
   */
  readonly unread?: true;
}

/** What one measured run of a command came to. */
export interface Measurement {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly wallSeconds: number;
  /** When the command was started (performance.now() of this process), ms. */
  readonly startedAt: number;
  /**
   * user + system CPU seconds of the whole process tree. From /usr/bin/time (wait4's rusage,
   * which includes every descendant its parent reaped) when available, else the sum of the
   * /proc readings of every process seen (which misses each process's last poll interval).
   */
  readonly cpuSeconds: number;
  readonly cpuSource: 'time' | 'proc';
  /** Every process of the tree (without /usr/bin/time itself), in the order first seen. */
  readonly processes: readonly ProcessPeak[];
  /** Largest peak RSS of any process of the tree, MiB (time's %M when available: exact). */
  readonly maxRssMb: number;
  readonly stdoutFile: string;
  readonly stderrFile: string;
  /** CPU seconds the whole machine used during the run (/proc/stat, every process and the kernel). */
  readonly machineCpuSeconds: number;
}

export interface MeasureOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Where stdout and stderr go (files `<logPrefix>.out` and `.err`). */
  readonly logPrefix: string;
  readonly timeoutMs: number;
  /** Names a process from its depth in the tree (1: the command itself) and its order among those seen at that depth. */
  readonly role: (depth: number, ordinal: number) => string;
  /** /proc poll interval, ms. */
  readonly pollMs?: number;
}

const TIME = '/usr/bin/time';
const TICKS_PER_SECOND = 100; // USER_HZ on Linux: the unit of utime and stime in /proc/<pid>/stat

/** True when GNU time is there to measure CPU of a whole tree exactly. */
export function haveGnuTime(): boolean {
  return existsSync(TIME);
}

interface Seen {
  pid: number;
  depth: number;
  role: string;
  hwmKb: number;
  ticks: number;
  /** How many polls read it. */
  polls: number;
  /** Start time (clock ticks since boot): tells this process from a later one with the same pid. */
  startTime: string;
}

function readProc(pid: number): { hwmKb: number; ticks: number; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
    const startTime = f[19]!; // field 22
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return { hwmKb: m === null ? 0 : Number(m[1]), ticks, startTime };
  } catch {
    return undefined; // gone
  }
}

/** CPU seconds the machine has been busy since boot, all cores (/proc/stat: all but idle and iowait). */
export function machineBusySeconds(): number {
  try {
    const f = readFileSync('/proc/stat', 'latin1').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = f;
    return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  // A child belongs to the thread that forked it: read every thread's list.
  for (const tid of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'latin1').trim();
      if (text !== '') for (const c of text.split(' ')) out.push(Number(c));
    } catch {
      // thread gone
    }
  }
  return out;
}

/** The process trees being measured now: how to stop each. */
const running = new Set<() => void>();

/** Stops every process tree being measured (the bench itself was told to stop). */
export function stopMeasured(): void {
  for (const kill of running) kill();
}

/**
 * Runs a command and measures it: wall time, CPU of the whole process tree, and the peak RSS
 * of every process in it. The tree is followed through /proc every `pollMs`: VmHWM is the
 * kernel's own high-water mark, so a peak between two polls is not missed (only growth in a
 * process's last interval before it exits could be). The command runs under /usr/bin/time
 * when it is installed, for exact CPU seconds of the tree.
 */
export async function measure(command: string, args: readonly string[], options: MeasureOptions): Promise<Measurement> {
  const useTime = haveGnuTime();
  const timeFile = `${options.logPrefix}.time`;
  const stdoutFile = `${options.logPrefix}.out`;
  const stderrFile = `${options.logPrefix}.err`;
  const out = openSync(stdoutFile, 'w');
  const err = openSync(stderrFile, 'w');
  const [cmd, argv] = useTime ? [TIME, ['-f', '%e %U %S %M', '-o', timeFile, command, ...args]] : [command, [...args]];
  const started = performance.now();
  const machineBefore = machineBusySeconds();
  const child = spawn(cmd, argv, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', out, err],
    // A process group of its own: stopping the bench stops every process of the tree, even
    // one started after the last poll (killTree).
    detached: true,
  });
  closeSync(out);
  closeSync(err);
  const rootPid = child.pid!;
  const seen = new Map<number, Seen>();
  const perDepth = new Map<number, number>();
  const rootDepth = useTime ? -1 : 0; // /usr/bin/time itself is depth 0 and not reported

  const poll = (): void => {
    const visit = (pid: number, depth: number): void => {
      const r = readProc(pid);
      if (r === undefined) return;
      let s = seen.get(pid);
      if (s === undefined) {
        const ordinal = (perDepth.get(depth) ?? 0) + 1;
        perDepth.set(depth, ordinal);
        s = { pid, depth, role: depth <= 0 ? 'time' : options.role(depth, ordinal), hwmKb: 0, ticks: 0, polls: 0, startTime: r.startTime };
        seen.set(pid, s);
      }
      if (r.startTime !== s.startTime) return; // the pid was reused
      s.polls++;
      s.hwmKb = Math.max(s.hwmKb, r.hwmKb);
      s.ticks = Math.max(s.ticks, r.ticks);
      for (const c of childrenOf(pid)) visit(c, depth + 1);
    };
    visit(rootPid, rootDepth + 1);
  };
  poll();
  const timer = setInterval(poll, options.pollMs ?? 100);

  // Whatever of the tree is still running is ours to stop: its process group (which the
  // command's children inherit), and the processes seen (the same pid and start time).
  const killTree = (): void => {
    tryKill(-rootPid, 'SIGKILL');
    for (const s of seen.values()) if (s.depth >= 1 && readProc(s.pid)?.startTime === s.startTime) tryKill(s.pid, 'SIGKILL');
    tryKill(rootPid, 'SIGKILL');
  };
  running.add(killTree);

  let timedOut = false;
  const killer = setTimeout(() => {
    timedOut = true;
    // The command first (it may stop its own children gracefully), then whatever is left.
    const main = [...seen.values()].find((s) => s.depth === 1);
    if (main) tryKill(main.pid, 'SIGTERM');
    setTimeout(killTree, 10_000).unref();
  }, options.timeoutMs);

  const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.on('exit', (c, s) => resolve({ code: c, signal: s }));
  });
  const wallSeconds = (performance.now() - started) / 1000;
  const machineCpuSeconds = machineBusySeconds() - machineBefore;
  clearInterval(timer);
  clearTimeout(killer);
  running.delete(killTree);
  // Anything of the tree still running (an orphaned grandchild).
  for (const s of seen.values()) if (s.depth >= 1 && readProc(s.pid)?.startTime === s.startTime) tryKill(s.pid, 'SIGKILL');

  const processes: ProcessPeak[] = [...seen.values()]
    .filter((s) => s.depth >= 1)
    .map((s) => ({
      pid: s.pid,
      role: s.role,
      peakRssMb: round(s.hwmKb / 1024, 1),
      cpuSeconds: round(s.ticks / TICKS_PER_SECOND, 2),
      ...(s.polls < 2 ? { unread: true as const } : {}),
    }));
  let cpuSeconds = processes.reduce((sum, p) => sum + p.cpuSeconds, 0);
  let cpuSource: 'time' | 'proc' = 'proc';
  let maxRssMb = Math.max(0, ...processes.filter((p) => p.unread !== true).map((p) => p.peakRssMb));
  let exitCode = code;
  if (useTime) {
    const text = await readFile(timeFile, 'utf8').catch(() => '');
    const lines = text.trim().split('\n');
    const m = /^([\d.]+) ([\d.]+) ([\d.]+) (\d+)$/.exec(lines[lines.length - 1] ?? '');
    if (m !== null) {
      cpuSeconds = Number(m[2]) + Number(m[3]);
      cpuSource = 'time';
      maxRssMb = Math.max(maxRssMb, round(Number(m[4]) / 1024, 1));
    }
    // time exits with the command's status; a command killed by a signal is reported in the file.
    const killed = /Command terminated by signal (\d+)/.exec(text);
    if (killed !== null) exitCode = 128 + Number(killed[1]);
    // A command that ended before a second poll could read it, with no children seen: time's
    // numbers are its own, and all there are.
    if (m !== null && processes.length <= 1 && processes.every((p) => p.unread === true)) {
      const pid = processes[0]?.pid ?? 0;
      processes.splice(0, 1, { pid, role: options.role(1, 1), peakRssMb: round(Number(m[4]) / 1024, 1), cpuSeconds });
    }
  }
  return {
    exitCode,
    signal,
    timedOut,
    wallSeconds: round(wallSeconds, 2),
    startedAt: started,
    cpuSeconds: round(cpuSeconds, 2),
    cpuSource,
    processes,
    maxRssMb,
    stdoutFile,
    stderrFile,
    machineCpuSeconds: round(machineCpuSeconds, 2),
  };
}

function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

export function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** The last `bytes` of a text file (for failure reports). */
export function tail(path: string, bytes = 2000): string {
  try {
    const text = readFileSync(path, 'utf8');
    return text.length <= bytes ? text : `...${text.slice(-bytes)}`;
  } catch {
    return '';
  }
}

/** A whole-number command-line value of a bench script, or one line on stderr and exit 2. */
export function wholeArg(script: string, name: string, value: string | undefined, min: number): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < min) {
    process.stderr.write(`${script}: --${name} must be a whole number >= ${min}, not ${JSON.stringify(value)}\n`);
    process.exit(2);
  }
  return n;
}
