import type { CrawlConfig } from '../config/crawl-config.js';
import { FaultPlan, type FaultKind, type NodeFault } from './faults.js';
import { MountServer } from './mount-server.js';
import { MountView, type MountViewOptions } from './mount-view.js';
import { applyNodeMutation, type Mutation } from './mutations.js';
import { Properties } from './properties.js';
import { Random } from './random.js';
import { Scheduler } from './scheduler.js';
import { placeFaults, type Scenario } from './scenarios.js';
import { SIM_DATA_DIR, drawSettings, simNodeConfig } from './sim-config.js';
import { SimClock, serverWall } from './sim-clock.js';
import { SimSite, type SimFetcher } from './sim-site.js';
import { Trace } from './trace.js';

/** Everything one simulated node's process is given. */
export interface SimNodeEnv {
  readonly config: CrawlConfig;
  readonly clock: SimClock;
  readonly fs: MountView;
  readonly fetcher: SimFetcher;
  /** The process's source of random ids, drawn from the run's generator. */
  readonly random: () => number;
  /** Where its log lines go (the trace, printed with --verbose). */
  readonly log: (line: string) => void;
}

/** A node as the simulator runs it: the real CrawlNode (src/sim/real-node.ts) or a stand-in in the harness's own tests. */
export interface SimNode {
  run(): Promise<{ readonly reason: string; readonly exitCode: number; readonly message?: string }>;
}

export type NodeFactory = (env: SimNodeEnv) => SimNode;

/** How to run one seed. */
export interface SimOptions {
  readonly factory: NodeFactory;
  /** Nodes at the start (default: 2 to 4, drawn). */
  readonly nodes?: number;
  readonly verbose?: boolean;
  /** How long listings and attributes may lag on every node (default: drawn, 0 on sshfs, 0 to 300 ms on NFS). */
  readonly cacheMs?: number;
  /** A mistake put into the mount or the nodes on purpose (docs/simulator.md, "Proof that it finds bugs"). */
  readonly mutation?: Mutation;
  /** A fault placed by the run instead of drawn ones (docs/simulator.md, "Scenarios"). */
  readonly scenario?: Scenario;
}

/** What a run came to. */
export interface SimResult {
  readonly seed: number;
  /** Hash of the trace: the same for every run of one seed. */
  readonly digest: string;
  readonly violations: readonly string[];
  /** Why the crawl did not end (no node ended by the rule): its pages are a later run's, not judged (property 3). */
  readonly unfinished: string | undefined;
  /** How often the case the run's scenario steers to came about, when it counts one (docs/simulator.md, "Scenarios"). */
  readonly hazards: number | undefined;
  readonly faults: ReadonlyMap<FaultKind, number>;
  /** The run's site, settings and faults. */
  readonly header: readonly string[];
  /** One line: the run's shape and end. */
  readonly summary: string;
  readonly trace: readonly string[];
}

/** Virtual milliseconds a crawl may take after its last fault (and the site's last trouble) before it counts as not ending. */
export const END_BOUND_MS = 120_000;

/** Virtual milliseconds in which faults start. */
const HORIZON_MS = 5_000;

/**
 * Runs one seed (docs/simulator.md): draws the site, the settings and the faults, starts the
 * nodes on the simulated mount and site, injects the faults on the virtual clock, and checks
 * the properties while it runs and at its end.
 */
export async function runSeed(seed: number, options: SimOptions): Promise<SimResult> {
  const rng = new Random(seed);
  const settings = drawSettings(rng.fork('settings'));
  const sched = new Scheduler();
  const trace = new Trace(SIM_DATA_DIR, options.verbose === true);
  const plan = new FaultPlan(rng.fork('faults'), {
    // Sending on needs a sender and an owner besides the node killed.
    nodes: options.nodes ?? rng.between(options.scenario === 'late-send-on' ? 3 : 2, 4),
    deadAfterMs: settings.deadAfterMs,
    horizonMs: HORIZON_MS,
    drawn: options.scenario === undefined,
  });
  const props = new Properties({
    perHost: settings.perHost,
    deadAfterMs: settings.deadAfterMs,
    fastestRate: Math.max(...plan.rates.values()),
  });
  const server = new MountServer(SIM_DATA_DIR, () => serverWall(sched), options.mutation?.server);
  const site = new SimSite({ sched, rng: rng.fork('site'), trace, observer: props });
  const mountRng = rng.fork('mount');
  const sshfs = mountRng.chance(0.5);
  const cacheMs = sshfs ? 0 : mountRng.pick([0, 50, 300]);
  const viewOptions: MountViewOptions = { sshfs, tornReads: sshfs, cacheMs: options.cacheMs ?? cacheMs };
  const nodeRng = rng.fork('nodes');
  const beat = /\/nodes\/[^/]+\.json$/;
  const scenario = placeFaults(options.scenario, {
    server,
    requests: site.requests,
    deadAfterMs: settings.deadAfterMs,
    kill: (p) => inject(killNow(p, sched.now)),
    pause: (p, forMs) => inject({ kind: 'pause', at: sched.now, node: p.slice(0, p.lastIndexOf('.')), forMs }),
  });
  const observe = (process: string, call: string, what: string, error: unknown): void => {
    if (error === undefined) scenario?.op?.(process, call, what);
    if (call !== 'rename' || error !== undefined || !beat.test(what)) return;
    props.beat(process, sched.now);
    const record = what.split(' -> ')[1]!;
    if (options.verbose === true) trace.log(sched.now, process, `record ${recordLine(server, record)}`);
    scenario?.record(process, recordState(server, record), runningNow());
  };
  const env = { server, sched, weather: plan, trace, observe };

  const live = new Map<string, string>();
  const ends = new Map<string, string>();
  const lostNodes = new Set<string>();
  let incarnation = 0;
  let pendingStarts = 0;
  let running = 0;
  /** The last node to stop ended by the rule (not killed): once none runs, the crawl is over, whatever was still to start. */
  let endedByRule = false;
  // The data directory as the last node to end by the rule left it (see checkMount below).
  let atRuleEnd: { path: string; data: Buffer }[] | undefined;
  let lastEnd = 0;
  let refused = 0;

  const start = (node: string): void => {
    const process = `${node}.${++incarnation}`;
    live.set(node, process);
    running++;
    endedByRule = false;
    const clock = new SimClock(sched, process, {
      rate: plan.rates.get(node.replace(/r$/, '')) ?? 1,
      offsetMs: nodeRng.between(-5000, 5000),
      origin: nodeRng.between(0, 1_000_000),
    });
    const idRng = nodeRng.fork(process);
    const fs = new MountView({ ...env, rng: nodeRng.fork(`${process}/fs`) }, node, process, viewOptions);
    trace.note(sched.now, node, `start ${process}`);
    const sim = options.factory({
      config: simNodeConfig(settings, node, site.seeds),
      clock,
      fs,
      fetcher: site.fetcherFor(node, process),
      random: () => idRng.next(),
      log: (text) => trace.log(sched.now, node, text),
    });
    const ended = (text: string, ok: boolean): void => {
      if (sched.stateOf(process) === 'dead') return;
      running--;
      lastEnd = sched.now;
      ends.set(process, text);
      props.exited(process, sched.now);
      if (text === 'complete') {
        endedByRule = true;
        atRuleEnd = server.files(SIM_DATA_DIR);
      }
      trace.note(sched.now, node, `end ${process} ${text}`);
      if (!ok) {
        lostNodes.add(node);
        props.violation(`${process} ended ${text}`);
      }
    };
    sim.run().then(
      (r) => ended(`${r.reason}${r.message === undefined ? '' : ` (${r.message})`}`, r.reason === 'complete'),
      (err: unknown) => {
        // A data directory that fails its check at start is refused (exit 3, docs/errors.md), as a user would see it.
        if (['DATA_DIR_UNUSABLE', 'DISK_FULL'].includes(String((err as { code?: unknown }).code))) {
          lostNodes.add(node);
          refused++;
          return ended(`refused to start: ${(err as Error).message}`, true);
        }
        ended(`by throwing ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`, false);
      },
    );
  };

  const runningNow = (): string[] => [...live.values()].filter((p) => !ends.has(p) && sched.stateOf(p) === 'running');

  const later = (ms: number, fn: () => void): void => {
    pendingStarts++;
    sched.after(ms, () => {
      pendingStarts--;
      fn();
    });
  };

  const inject = (f: NodeFault): void => {
    if (f.kind === 'join') {
      plan.count('join');
      trace.note(sched.now, f.node, 'join');
      start(f.node);
      return;
    }
    const process = live.get(f.node);
    if (process === undefined || ends.has(process) || sched.stateOf(process) !== 'running') return;
    if (f.kind === 'pause') {
      const long = f.forMs > settings.deadAfterMs;
      plan.count(long ? 'long-pause' : 'pause');
      trace.note(sched.now, f.node, `pause ${process} for ${f.forMs}`);
      sched.pause(process);
      sched.after(f.forMs, () => {
        trace.note(sched.now, f.node, `resume ${process}`);
        sched.resume(process);
      });
      return;
    }
    plan.count('kill');
    trace.note(sched.now, f.node, `kill ${process}`);
    sched.kill(process);
    running--;
    endedByRule = false;
    lostNodes.add(f.node);
    props.killed(process, sched.now);
    if (f.restartAfter !== undefined) {
      plan.count('restart');
      const node = f.newId ? `${f.node}r` : f.node;
      later(f.restartAfter, () => start(node));
    }
  };

  const header = [
    `seed ${seed}: ${site.hosts.length} hosts, ${site.pages.size} URLs, settings ${JSON.stringify(settings)}, mount ${sshfs ? 'sshfs' : `nfs cache ${viewOptions.cacheMs}`}`,
    `faults: ${plan.describe() || 'none'}`,
  ];
  for (const line of header) trace.note(0, '-', line);
  for (const node of plan.initial) later(0, () => start(node));
  for (const f of plan.nodeFaults) later(f.at, () => inject(f));

  const siteTrouble = Math.max(0, ...[...site.pages.values()].map((p) => p.failUntil), ...site.hosts.map((h) => h.robotsFailUntil));
  const calm = Math.max(plan.lastFaultEnd, siteTrouble);
  // The crawl ends when no node runs, unless every node was killed and one is still to come back.
  const restore = applyNodeMutation(options.mutation);
  const stop = await sched.run(calm + END_BOUND_MS, () => running === 0 && (pendingStarts === 0 || endedByRule)).finally(restore);
  if (stop !== 'done') {
    const waiting = [...live.values()].filter((p) => !ends.has(p) && sched.stateOf(p) !== 'dead');
    props.violation(
      stop === 'time'
        ? `not ended ${END_BOUND_MS / 1000} s after the last fault: ${waiting.join(', ')} still running`
        : `stuck: ${waiting.join(', ')} wait for nothing`,
    );
  }
  // Every node killed for good or refused to start: no node ended the crawl, whose pages are a later run's.
  if (![...ends.values()].includes('complete')) props.leftUnfinished('no node ended by the rule');
  props.checkFetches(site);
  // A node still at work when another ended by the rule may take up work left for a later run
  // (a host left alone): killed for good then, what it found is that later run's. The pages are
  // checked as of the last end by the rule unless the crawl's last stop was one.
  const files = server.files(SIM_DATA_DIR);
  props.checkMount(files, site, lostNodes, endedByRule ? files : (atRuleEnd ?? files));

  const pages = site.requests.filter((r) => r.status === 200).length;
  const summary =
    `seed ${seed}: ${plan.initial.length} nodes, ${site.hosts.length} hosts, ${site.pages.size} URLs; ` +
    `${site.requests.length} requests (${pages} answered 200, ${props.refetched} fetched again after a fault); ` +
    `${refused > 0 ? `${refused} refused to start on a failing mount; ` : ''}${sched.steps} events; last end at ${(lastEnd / 1000).toFixed(2)} s (faults over at ${(calm / 1000).toFixed(2)} s); ` +
    `${props.unfinished === undefined ? '' : `unfinished (${props.unfinished}); `}` +
    `${scenario?.hazards === undefined ? '' : `${scenario.hazards} files sent on found in a done node's inbox; `}trace ${trace.digest()}: ${props.violations.length === 0 ? 'ok' : `${props.violations.length} violations`}`;
  return {
    seed,
    digest: trace.digest(),
    violations: props.violations,
    unfinished: props.unfinished,
    hazards: scenario?.hazards,
    faults: plan.counts,
    header,
    summary,
    trace: trace.lines,
  };
}

/** A kill of `process` at `at`, for good. */
function killNow(process: string, at: number): NodeFault {
  return { kind: 'kill', at, node: process.slice(0, process.lastIndexOf('.')), restartAfter: undefined, newId: false };
}

/** A node record's state (`idle`, `crawling`, ...), or `unreadable`. */
function recordState(server: MountServer, path: string): string {
  try {
    return String((JSON.parse(server.readFile(path).data.toString('utf8')) as Record<string, unknown>).state);
  } catch {
    return 'unreadable';
  }
}

/** A node record's state in brief, for the verbose trace. */
function recordLine(server: MountServer, path: string): string {
  try {
    const r = JSON.parse(server.readFile(path).data.toString('utf8')) as Record<string, unknown>;
    return `${String(r.state)} counter ${String(r.counter)} epoch ${String(r.idleEpoch)} round ${String(r.round)} hosts ${JSON.stringify(r.hosts)}`;
  } catch {
    return 'unreadable';
  }
}
