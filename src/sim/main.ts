import { FAULT_KINDS, type FaultKind } from './faults.js';
import { MUTATIONS, type Mutation } from './mutations.js';
import { realNode } from './real-node.js';
import { SCENARIOS, type Scenario } from './scenarios.js';
import { runSeed, type SimOptions } from './sim-run.js';

const USAGE =
  'usage: npm run sim -- (--seed S | --seeds A..B) [--nodes N] [--cache-ms MS] [--verbose] [--mutation link-replaces|no-last-look|no-settle|no-settle-no-last-look] [--scenario end-kill|late-send-on]';

interface Args {
  readonly from: number;
  readonly to: number;
  readonly nodes: number | undefined;
  readonly cacheMs: number | undefined;
  readonly verbose: boolean;
  readonly mutation: Mutation | undefined;
  readonly scenario: Scenario | undefined;
}

/** The command line, or one line saying what is wrong with it. */
function parseArgs(argv: readonly string[]): Args | string {
  let range: [number, number] | undefined;
  let nodes: number | undefined;
  let cacheMs: number | undefined;
  let verbose = false;
  let mutation: Mutation | undefined;
  let scenario: Scenario | undefined;
  const int = (s: string | undefined): number | undefined => (s !== undefined && /^\d+$/.test(s) ? Number(s) : undefined);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = argv[i + 1];
    if (a === '--verbose') verbose = true;
    else if (a === '--seed') {
      const s = int(value);
      if (s === undefined) return `--seed wants a number, got ${value ?? 'nothing'}`;
      range = [s, s];
      i++;
    } else if (a === '--seeds') {
      const m = /^(\d+)\.\.(\d+)$/.exec(value ?? '');
      if (m === null || Number(m[1]) > Number(m[2])) return `--seeds wants A..B with A <= B, got ${value ?? 'nothing'}`;
      range = [Number(m[1]), Number(m[2])];
      i++;
    } else if (a === '--nodes') {
      nodes = int(value);
      if (nodes === undefined || nodes < 1 || nodes > 16) return `--nodes wants 1 to 16, got ${value ?? 'nothing'}`;
      i++;
    } else if (a === '--cache-ms') {
      cacheMs = int(value);
      if (cacheMs === undefined) return `--cache-ms wants a number of milliseconds, got ${value ?? 'nothing'}`;
      i++;
    } else if (a === '--mutation') {
      mutation = MUTATIONS[value ?? ''];
      if (mutation === undefined) return `--mutation wants one of ${Object.keys(MUTATIONS).join(', ')}, got ${value ?? 'nothing'}`;
      i++;
    } else if (a === '--scenario') {
      scenario = SCENARIOS.find((s) => s === value);
      if (scenario === undefined) return `--scenario wants one of ${SCENARIOS.join(', ')}, got ${value ?? 'nothing'}`;
      i++;
    } else return `unknown argument ${a}`;
  }
  if (range === undefined) return USAGE;
  return { from: range[0], to: range[1], nodes, cacheMs, verbose, mutation, scenario };
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n(docs/simulator.md)\n`);
    return 0;
  }
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    process.stderr.write(`mountcrawl sim: ${args}\n`);
    return 2;
  }
  const options: SimOptions = {
    factory: realNode,
    verbose: args.verbose,
    ...(args.nodes === undefined ? {} : { nodes: args.nodes }),
    ...(args.cacheMs === undefined ? {} : { cacheMs: args.cacheMs }),
    ...(args.mutation === undefined ? {} : { mutation: args.mutation }),
    ...(args.scenario === undefined ? {} : { scenario: args.scenario }),
  };
  const single = args.from === args.to;
  const faults = new Map<FaultKind, number>();
  let runs = 0;
  let violations = 0;
  let failing = 0;
  let unfinished = 0;
  /** Runs in which the scenario's case came about, when it counts one. */
  let hazardSeeds: number | undefined;
  for (let seed = args.from; seed <= args.to; seed++) {
    const r = await runSeed(seed, options);
    runs++;
    violations += r.violations.length;
    if (r.violations.length > 0) failing++;
    if (r.unfinished !== undefined) unfinished++;
    if (r.hazards !== undefined) hazardSeeds = (hazardSeeds ?? 0) + (r.hazards > 0 ? 1 : 0);
    for (const [kind, n] of r.faults) faults.set(kind, (faults.get(kind) ?? 0) + n);
    if (single) {
      for (const line of args.verbose ? r.trace : r.header) process.stdout.write(`${line}\n`);
      process.stdout.write(`${r.summary}\n`);
      for (const v of r.violations) process.stdout.write(`  violation: ${v}\n`);
    } else {
      if (r.violations.length > 0)
        process.stdout.write(`seed ${seed}: ${r.violations.length} violations: ${r.violations[0]!.split('\n')[0]}\n`);
      if ((r.hazards ?? 0) > 0) process.stdout.write(`seed ${seed}: the scenario's case came about (${r.hazards})\n`);
    }
  }
  const kinds = FAULT_KINDS.map((k) => `${k} ${faults.get(k) ?? 0}`).join(', ');
  process.stdout.write(
    `${runs} runs, ${violations} violations in ${failing} seeds; faults injected: ${kinds}; unfinished ${unfinished}${hazardSeeds === undefined ? '' : `; the scenario's case in ${hazardSeeds}`}\n`,
  );
  return violations > 0 ? 1 : 0;
}

// A reader that closes early (`| head`) ends the run quietly, as it would any command-line tool.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(0);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mountcrawl sim: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
