import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import { ExitCode } from '../errors.js';
import { StreamLogger } from '../progress/logger.js';
import { ProgressDisplay } from '../progress/progress-display.js';
import { HostTally } from '../progress/host-tally.js';
import { totalOf, type Snapshot } from '../progress/snapshot.js';
import { openDataDir } from '../store/data-dir.js';
import { refuseWithoutSeeds } from './seeds-first.js';
import { reconcileNormalization } from '../crawl/normalization.js';
import { NORMALIZATION_VERSION } from '../url/normalize.js';
import { politenessStartLine } from '../progress/politeness-notes.js';
import { holdingsLine, holdingsOf, judgeOutcome } from './run-outcome.js';
import { idleNodesLines } from './idle-nodes.js';
import type { CrawlStart } from './crawl-command.js';
import { settleSettings } from '../config/settings-file.js';
import { othersAlive } from './node-records.js';
import type { MetricSample } from '../metrics/metric-sample.js';
import { knownErrs, type ChildMessage, type HeldErrsMessage } from './child-messages.js';
import { backoffMs } from '../frontier/retry-policy.js';
import { readControl } from '../cluster/control-file.js';
import type { Layout } from '../store/layout.js';

/** The environment variable that tells a crawl it runs under a supervisor, and how many nodes it started. */
export const SUPERVISED_ENV = 'MOUNTCRAWL_SUPERVISED';
/** The control file's `seq` when the supervisor started: a stop given later stops the nodes it restarts too (docs/operations.md). */
export const CONTROL_SINCE_ENV = 'MOUNTCRAWL_CONTROL_SINCE';
/** Set to 1 for the children of a supervisor that serves /metrics: their progress messages then carry their counters. */
export const METRICS_ENV = 'MOUNTCRAWL_SEND_METRICS';

const BIN = fileURLToPath(new URL('../../../bin/mountcrawl.js', import.meta.url));

/** Exit codes after which a child is not started again: it finished, or cannot do better. */
const FINAL_CODES = new Set<number>([
  ExitCode.OK,
  ExitCode.USAGE,
  ExitCode.DATA_DIR,
  ExitCode.MOUNT,
  ExitCode.NOTHING_FETCHED,
  ExitCode.DATA_DIR_NOT_WRITABLE,
]);
const MAX_BACKOFF_MS = 30_000;
/** A child that crashes this many times in a row is given up on. */
const MAX_CRASHES = 5;

/** Options of the supervisor alone: its children are not given them. */
const SUPERVISOR_ONLY = ['--processes', '--metrics-port', '--metrics-host'];

/**
 * The command line of a child: the parent's, without --processes and the metrics options (the
 * supervisor serves its nodes' metrics), with its own node id when one was given.
 */
export function childArgs(argv: readonly string[], index: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (SUPERVISOR_ONLY.includes(a) || a === '--node-id') {
      const value = argv[++i];
      if (a === '--node-id' && value !== undefined) out.push('--node-id', `${value}-${index + 1}`);
      continue;
    }
    if (SUPERVISOR_ONLY.some((o) => a.startsWith(`${o}=`))) continue;
    if (a.startsWith('--node-id=')) {
      out.push(`--node-id=${a.slice('--node-id='.length)}-${index + 1}`);
      continue;
    }
    out.push(a);
  }
  return out;
}

/** The young generation of a child's main thread, MiB a semi-space (Node's default is 16). */
const CHILD_SEMI_SPACE_MB = 4;

/**
 * The Node flags of a child: the supervisor's own, and a smaller young generation unless the
 * user set one (on the command line or in NODE_OPTIONS). A node's live data is small and its
 * garbage (response bodies, records) dies young: with 16 MiB semi-spaces the dead bodies
 * wait longer for a collection, about 20 MiB more peak RSS a process at the same pages/s
 * (docs/benchmarks-log.md, "A smaller young generation for --processes"). A single process cannot
 * set it for itself: Node reads it only at start.
 */
export function childExecArgv(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((a) => /^--max-semi-space-size(=|$)/.test(a));
  return given ? [...execArgv] : [...execArgv, `--max-semi-space-size=${CHILD_SEMI_SPACE_MB}`];
}

interface Slot {
  readonly index: number;
  child: ChildProcess | undefined;
  snapshot: Snapshot | undefined;
  /** What the child said it held at its end (cleared when a child starts). */
  heldErrs: HeldErrsMessage | undefined;
  crashes: number;
  exitCode: number | undefined;
  restartTimer: NodeJS.Timeout | undefined;
  /** The child's node id and counters, from its last progress message (--metrics-port). */
  metrics: readonly [string, MetricSample] | undefined;
}

/**
 * `--processes N` (docs/architecture.md, "Processes"): starts N nodes on this machine, each a separate process
 * running the very same crawl (same protocol as nodes on other machines; ids from host
 * name and pid), restarts one that crashes (with backoff), shows one progress display
 * (a bar per node and a total), passes Ctrl-C and SIGTERM on (a second one kills them at
 * once), and exits with the worst child status.
 */
export async function runSupervisor(
  options: CrawlConfig,
  settings: CrawlStart,
  processes: number,
  argv: readonly string[],
): Promise<number> {
  const logger = new StreamLogger({ json: options.json, verbose: options.verbose, quiet: !options.progress, nodeId: 'supervisor' });
  // Problems with the seeds or the data directory are reported once, here (the seeds first:
  // nothing is created for a crawl that has nothing to start from).
  await refuseWithoutSeeds(options);
  const { layout, marker } = await openDataDir(options.dataDir, options.nodeId, {
    version: NORMALIZATION_VERSION,
    sessionParams: [...options.normalize.sessionParams].sort(),
  });
  reconcileNormalization(marker, options);
  // A conflict is told once, here; the children then adopt what this wrote or read.
  const settled = await settleSettings(options, settings, settings.given, () => othersAlive(layout, options.nodeId));
  const config = settled.config;
  for (const line of settled.changed) logger.info(`a new run changes the crawl's settings (revision ${settled.record.revision}): ${line}`);
  const display = new ProgressDisplay({ enabled: config.progress, json: config.json }, logger);
  const since = await controlSeq(layout);
  const slots: Slot[] = Array.from({ length: processes }, (_, index) => ({
    index,
    child: undefined,
    snapshot: undefined,
    heldErrs: undefined,
    crashes: 0,
    exitCode: undefined,
    restartTimer: undefined,
    metrics: undefined,
  }));
  const metrics = config.metrics && (await import('../metrics/metrics-server.js'));
  const served = metrics && (await metrics.serveSamples(config.metrics!, () => slots.flatMap((s) => (s.metrics ? [s.metrics] : []))));
  if (served) logger.info(`metrics of ${processes} nodes at ${served.url}`);
  let stopping: NodeJS.Signals | 'stop' | undefined;
  let resolveAll: () => void;
  const allDone = new Promise<void>((resolve) => (resolveAll = resolve));
  const started = systemClock.monotonic();

  const checkDone = (): void => {
    if (slots.every((s) => s.exitCode !== undefined && s.child === undefined && s.restartTimer === undefined)) resolveAll();
  };

  // A sibling turned idle or ended: the others look at nodes/ now rather than at their next
  // heartbeat, so that the last ones see the end at once (docs/benchmarks-log.md, "Fixed costs of one crawl").
  const nudge = (from: Slot): void => {
    for (const s of slots) {
      if (s === from || s.child?.connected !== true) continue;
      try {
        s.child.send({ type: 'look' }, () => undefined);
      } catch {
        // the channel closed meanwhile: that node is ending anyway
      }
    }
  };

  const tally = new HostTally();
  const start = (slot: Slot): void => {
    slot.restartTimer = undefined;
    const child = fork(BIN, childArgs(argv, slot.index), {
      execArgv: childExecArgv(process.execArgv, process.env.NODE_OPTIONS),
      env: { ...process.env, [SUPERVISED_ENV]: String(processes), [METRICS_ENV]: served ? '1' : '0', [CONTROL_SINCE_ENV]: String(since) },
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      detached: true, // its own process group: Ctrl-C reaches the supervisor, which passes it on once
    });
    slot.child = child;
    slot.exitCode = undefined;
    slot.heldErrs = undefined;
    let partial = '';
    child.stderr!.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) if (line !== '') logger.forward(`[${slot.index + 1}] ${line}`);
    });
    child.on('message', (m: ChildMessage) => {
      if (m?.type === 'held-errs') slot.heldErrs = m;
      if (m?.type !== 'progress') return;
      const wasIdle = slot.snapshot?.state === 'idle';
      slot.snapshot = { ...m.snapshot, label: `node ${slot.index + 1}` };
      if (m.metrics !== undefined) slot.metrics = [m.snapshot.label, m.metrics];
      if (m.hosts !== undefined) tally.set(slot.index, m.hosts);
      if (!wasIdle && m.snapshot.state === 'idle') nudge(slot);
    });
    child.on('exit', (code, signal) => {
      slot.child = undefined;
      tally.forget(slot.index);
      nudge(slot);
      const crashed = stopping === undefined && (signal !== null || !FINAL_CODES.has(code ?? -1));
      if (crashed && slot.crashes < MAX_CRASHES) {
        slot.crashes++;
        const wait = backoffMs(slot.crashes, 500, MAX_BACKOFF_MS);
        logger.warn(
          `node ${slot.index + 1} (pid ${child.pid}) ${signal ? `killed by ${signal}` : `exited with ${code}`}; restarting in ${wait} ms`,
        );
        slot.exitCode = code ?? ExitCode.INTERNAL;
        slot.restartTimer = setTimeout(() => start(slot), wait);
        return;
      }
      if (crashed) logger.error(`node ${slot.index + 1} crashed ${slot.crashes + 1} times; giving up on it`);
      slot.exitCode = code ?? (signal === 'SIGINT' ? ExitCode.INTERRUPTED : signal === 'SIGTERM' ? ExitCode.TERMINATED : ExitCode.INTERNAL);
      checkDone();
    });
    logger.info(`node ${slot.index + 1} started (pid ${child.pid})`);
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping !== undefined) {
      logger.warn('stopping every node at once');
      for (const s of slots) if (s.child?.pid) process.kill(s.child.pid, 'SIGKILL');
      display.stop();
      process.exit(signal === 'SIGINT' ? ExitCode.INTERRUPTED : ExitCode.TERMINATED);
    }
    stopping = signal;
    logger.warn(`${signal}: stopping ${processes} nodes after their requests in flight (again to quit at once)`);
    for (const s of slots) {
      if (s.restartTimer) {
        clearTimeout(s.restartTimer);
        s.restartTimer = undefined;
      }
      if (s.child?.pid) process.kill(s.child.pid, signal);
    }
    checkDone();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const snapshots = (): Snapshot[] => {
    const live = slots.map((s) => s.snapshot).filter((s): s is Snapshot => s !== undefined);
    // Nothing to show before a node has reported (and the total's bar comes after the nodes' bars).
    if (live.length === 0) return [];
    const total = totalOf('total', live);
    return [...live, tally.known ? { ...total, hostsOwned: tally.count } : total];
  };
  display.start(snapshots);
  logger.info(politenessStartLine(config));
  for (const slot of slots) start(slot);
  await allDone;
  await served?.close();
  display.stop(snapshots());
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);

  const total = totalOf(
    'total',
    slots.map((s) => s.snapshot).filter((s): s is Snapshot => s !== undefined),
  );
  const seconds = Math.round((systemClock.monotonic() - started) / 100) / 10;
  const codes = slots.map((s) => s.exitCode ?? ExitCode.INTERNAL);
  // Totals of the data directory count each host and each failed URL once, however many
  // nodes held the host or tried the URL (the per-node counters overlap).
  const reports = slots.flatMap((s) => (s.heldErrs === undefined ? [] : [s.heldErrs]));
  // Stopped by mountcrawl stop: the nodes exited 0 with work left, which is no complete crawl.
  if (stopping === undefined && (await controlSeq(layout, 'stop')) > since) stopping = 'stop';
  const complete = stopping === undefined && codes.every((c) => c === ExitCode.OK) && reports.length === slots.length;
  const held = await holdingsOf(layout, config.maxAttempts, complete ? knownErrs(reports) : undefined);
  const lines = [`all ${processes} nodes ended: ${total.pages} pages in ${seconds} s; exit codes ${codes.join(', ')}`];
  if (held !== undefined) {
    lines.push(holdingsLine(held));
    // Fetched nothing and failed nothing: under host partitioning, say why (idleNodesLines).
    const idle = slots.filter((s) => (s.snapshot?.pages ?? 0) === 0 && (s.snapshot?.errors ?? 0) === 0);
    if (idle.length > 0 && config.partition === 'host' && stopping === undefined) {
      const idleNodes = idle.map((s) => ({ index: s.index, owned: s.heldErrs?.owned }));
      lines.push(...idleNodesLines(idleNodes, { nodes: slots.length, pages: held.pages, hosts: held.hosts.length }));
    }
  }
  for (const line of lines) {
    if (config.json) process.stderr.write(`${JSON.stringify({ level: 'info', node: 'supervisor', msg: line })}\n`);
    else process.stderr.write(`mountcrawl: ${line}\n`);
  }
  if (stopping !== undefined) return stopping === 'stop' ? ExitCode.OK : stopping === 'SIGINT' ? ExitCode.INTERRUPTED : ExitCode.TERMINATED;
  const worst = worstExitCode(codes);
  if (held === undefined) return worst;
  const verdict = judgeOutcome({ reason: 'complete', exitCode: worst }, held);
  if (verdict.message !== undefined) process.stderr.write(`mountcrawl: ${verdict.message}\n`);
  return verdict.exitCode;
}

/** The control file's `seq` (`stop`: of its last stop), 0 when there is none or it cannot be read. */
async function controlSeq(layout: Layout, of: 'file' | 'stop' = 'file'): Promise<number> {
  const read = await readControl(layout.mount, layout.root).catch(() => 'absent' as const);
  if (typeof read !== 'object') return 0;
  return of === 'file' ? read.seq : (read.stop?.seq ?? 0);
}

/** The exit code that says the most: any failure beats success; the highest failure wins. */
export function worstExitCode(codes: readonly number[]): number {
  return codes.reduce((worst, c) => (c > worst ? c : worst), 0);
}
