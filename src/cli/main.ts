import { Command, CommanderError } from 'commander';
import { parseWhole } from '../config/parse-values.js';
import { DEFAULTS } from '../config/crawl-config.js';
import { parseProcesses, processesWarning } from '../config/processes.js';
import { ExitCode, FatalError, MountcrawlError, describeError } from '../errors.js';
import { addCrawlOptions, buildCrawlConfig, dataDirOption, resolveDataDir, type CrawlOptionValues } from './crawl-options.js';
import { runCrawl } from './crawl-command.js';
import { keyCommand, locateCommand } from './key-command.js';
import { seedCommand } from './seed-command.js';
import { CONTROL_SINCE_ENV, METRICS_ENV, SUPERVISED_ENV, runSupervisor } from './supervisor.js';
import { sampleOf } from '../metrics/metric-sample.js';
import { heldErrsMessage, type ChildMessage } from './child-messages.js';
import type { CrawlNode } from '../crawl/crawl-node.js';
import { onlyWhenChanged } from '../progress/host-tally.js';
import { refuseOptionLikeValues } from './option-like-values.js';
import { snapshotOf } from '../progress/snapshot.js';
import { loadHooks } from '../hooks/hooks.js';
import { invokedAs } from './invoked-as.js';
import { givenSettings } from '../config/crawl-settings.js';

const VERSION = '0.1.0';

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Builds the command-line program; each action stores its exit code in `result`. */
function buildProgram(result: { code: number }, argv: readonly string[]): Command {
  const program = new Command('mountcrawl')
    .description('A web crawler for many machines that share nothing but a directory (NFS, sshfs).')
    .version(VERSION)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: (s) => process.stdout.write(s) });

  addCrawlOptions(
    program
      .command('crawl')
      .description('crawl from the given URLs (and the seeds already in the data directory)')
      .argument('[urls...]', 'seed URLs'),
  ).action(async (urls: string[], opts: CrawlOptionValues, cmd: Command) => {
    // A seeds file's bad lines are reported once: by the supervisor, not again by each node.
    const warn = process.env[SUPERVISED_ENV] ? () => undefined : (line: string) => process.stderr.write(`mountcrawl: warning: ${line}\n`);
    const given = (name: string): boolean => cmd.getOptionValueSource(name) === 'cli';
    const config = buildCrawlConfig(urls, opts, process.env, given, warn);
    const start = { given: givenSettings(given), hookFiles: hookFiles(opts) };
    const processes = parseProcesses(String(opts.processes));
    const tooMany = processesWarning(processes);
    if (tooMany !== undefined) warn(tooMany);
    if (processes > 1) {
      await loadHooks(hookFiles(opts)); // checked once here; each node loads them
      result.code = await runSupervisor(config, start, processes, argv.slice(2));
      return;
    }
    const userHooks = await loadHooks(hookFiles(opts));
    // Under --processes N the supervisor says N: this node starts with N - 1 siblings.
    const siblings = Number(process.env[SUPERVISED_ENV]);
    const supervised = Number.isInteger(siblings) && siblings >= 1 && typeof process.send === 'function';
    // The supervisor says when a sibling turned idle or ended: look at the others now.
    let crawling: CrawlNode | undefined;
    if (supervised) process.on('message', (m: { type?: string } | null) => m?.type === 'look' && crawling?.look());
    const toSupervisor = progressToSupervisor(config.nodeId);
    const onProgress = (node: CrawlNode): void => {
      crawling = node;
      toSupervisor(node);
    };
    // At its end a child tells the supervisor what it held, so that the summary need not read it again.
    const onEnd = (node: CrawlNode): Promise<void> => {
      const held = node.heldErrs;
      if (held === undefined) return Promise.resolve();
      return new Promise<void>((resolve) => {
        try {
          process.send!(heldErrsMessage(held, { most: node.stats.hostsOwnedMost, handedOn: node.stats.hostsHandedOn }), undefined, {}, () =>
            resolve(),
          );
        } catch {
          resolve(); // the supervisor is gone: it reads the data directory, or nobody does
        }
      });
    };
    result.code = await runCrawl(
      supervised ? { ...config, startPeers: siblings - 1, controlSince: Number(process.env[CONTROL_SINCE_ENV] ?? 0) } : config,
      start,
      supervised ? { onProgress, onEnd } : {},
      userHooks,
    );
  });

  program
    .command('key')
    .description('print the key (SHA-224 of the normalized URL) and the normalized URL')
    .argument('<url>')
    .option('--data <dir>', "use this data directory's URL normalization (its --session-params)")
    .action(async (url: string, opts: { data?: string }) => {
      result.code = await keyCommand(url, opts.data ?? (process.env.MOUNTCRAWL_DATA || undefined), out);
    });

  dataDirOption(
    program.command('locate').description('print the files of a URL in the data directory and whether each exists').argument('<url>'),
  )
    .option('--json', 'one JSON object')
    .action(async (url: string, opts: { data?: string; json?: boolean }) => {
      result.code = await locateCommand(url, resolveDataDir(opts.data, process.env), opts.json === true, out);
    });

  dataDirOption(program.command('seed').description('add seed URLs that running nodes pick up').argument('<urls...>')).action(
    async (urls: string[], opts: { data?: string }) => {
      result.code = await seedCommand(urls, resolveDataDir(opts.data, process.env), out);
    },
  );

  dataDirOption(program.command('status').description('nodes, hosts, pages and errors of a data directory'))
    .option('--json', 'one JSON object for scripts')
    .option('--no-wait', 'do not watch heartbeats for a second to tell live nodes from dead ones')
    .option(
      '--max-attempts <n>',
      `count errs records final as a crawl with this --max-attempts would (default: the last run's, else ${DEFAULTS.maxAttempts})`,
    )
    .option('--watch', 'redraw a table of the nodes and totals about once a second, until Ctrl-C')
    .action(async (opts: { data?: string; json?: boolean; wait?: boolean; maxAttempts?: string; watch?: boolean }) => {
      if (opts.watch === true) {
        const { watchStatus } = await import('./status-watch.js');
        const data = resolveDataDir(opts.data, process.env);
        result.code = await watchStatus(data, 1_000, process.stdout.isTTY === true, (text) => process.stdout.write(text));
        return;
      }
      const { statusCommand } = await import('./status-command.js');
      const maxAttempts = opts.maxAttempts === undefined ? {} : { maxAttempts: parseWhole('--max-attempts', opts.maxAttempts, 1) };
      result.code = await statusCommand(
        resolveDataDir(opts.data, process.env),
        { json: opts.json === true, wait: opts.wait !== false, ...maxAttempts },
        out,
      );
    });

  const config = dataDirOption(program.command('config').description("show the crawl's settings (docs/operations.md)"))
    .option('--json', 'the settings file as it is')
    .action(async (opts: { data?: string; json?: boolean }) => {
      const { configShowCommand } = await import('./config-command.js');
      result.code = await configShowCommand(resolveDataDir(opts.data, process.env), opts.json === true, out);
    });
  dataDirOption(
    config
      .command('set')
      .description('change one setting of the crawl; running nodes apply delay, per-host and max-pages within a heartbeat')
      .argument('<name>', 'a setting, as mountcrawl config names it (delay, include, ...)')
      .argument('[values...]', 'its value (several for include, exclude, header, keep; none to empty those)'),
  ).action(async (name: string, values: string[], opts: { data?: string }) => {
    const { configSetCommand } = await import('./config-command.js');
    const data = opts.data ?? (config.opts() as { data?: string }).data;
    result.code = await configSetCommand(resolveDataDir(data, process.env), name, values, out);
  });

  const orders = {
    stop: 'stop every running node of the crawl as Ctrl-C does (they exit 0); mountcrawl crawl resumes',
    pause: 'running nodes send no request until resume, and keep their hosts; nodes started meanwhile start paused',
    resume: 'end a pause',
  } as const;
  for (const [verb, description] of Object.entries(orders) as [keyof typeof orders, string][]) {
    dataDirOption(program.command(verb).description(description)).action(async (opts: { data?: string }) => {
      const { controlCommand } = await import('./control-command.js');
      result.code = await controlCommand(verb, resolveDataDir(opts.data, process.env), undefined, out);
    });
  }
  dataDirOption(
    program
      .command('drain')
      .description('that node hands its hosts over to the others and exits 0 (mountcrawl status names the nodes)')
      .argument('<node>', 'the id of a node, as mountcrawl status shows it'),
  ).action(async (node: string, opts: { data?: string }) => {
    const { controlCommand } = await import('./control-command.js');
    result.code = await controlCommand('drain', resolveDataDir(opts.data, process.env), node, out);
  });

  dataDirOption(
    program
      .command('export')
      .description('print the links records (and errs records with --errors) as JSON lines, for jq on a crawl of any size'),
  )
    .option('--jsonl', 'one JSON object per line (the only format, and the default)')
    .option('--errors', 'also the errs records of URLs that failed')
    .option(
      '--host <dir>',
      'only this host directory, e.g. example.com or 127.0.0.1_8080 (repeatable)',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option('--fields <names>', 'only these fields of each record, comma-separated (key,url,depth reads host summaries, not every record)')
    .action(async (opts: { data?: string; errors?: boolean; host?: string[]; fields?: string }) => {
      const { exportCommand, streamSink } = await import('./export-command.js');
      const { parseFields } = await import('./export-fields.js');
      result.code = await exportCommand(
        resolveDataDir(opts.data, process.env),
        { errors: opts.errors === true, hosts: opts.host ?? [], fields: opts.fields === undefined ? undefined : parseFields(opts.fields) },
        streamSink(process.stdout),
      );
    });

  dataDirOption(program.command('report').description('write one self-contained HTML report of a data directory (or --json)'))
    .option('--out <file>', 'where to write it (default: mountcrawl-report.html; with --json: stdout)')
    .option('--json', 'the same numbers as JSON')
    .action(async (opts: { data?: string; out?: string; json?: boolean }) => {
      const { reportCommand } = await import('./report-command.js');
      result.code = await reportCommand(resolveDataDir(opts.data, process.env), { out: opts.out, json: opts.json === true }, out);
    });

  dataDirOption(program.command('demo').description('start a small web site on loopback and crawl it with several nodes'))
    .option('--processes <n>', 'nodes to start', '3')
    .option('--hosts <n>', 'hosts of the demo site', '8')
    .option('--pages <n>', 'pages per host', '150')
    .option('--no-progress', 'no progress display')
    .action(async (opts: { data?: string; processes: string; hosts: string; pages: string; progress: boolean }) => {
      const { demoCommand } = await import('./demo-command.js');
      result.code = await demoCommand(
        {
          dataDir: resolveDataDir(opts.data, process.env),
          processes: parseWhole('--processes', opts.processes, 1),
          hosts: Math.min(parseWhole('--hosts', opts.hosts, 1), 200),
          pages: parseWhole('--pages', opts.pages, 1),
          progress: opts.progress,
          invokedAs: invokedAs(argv, process.env, process.cwd()),
        },
        (args) => main([argv[0] ?? process.execPath, argv[1] ?? 'mountcrawl', ...args]),
        out,
      );
    });

  return program;
}

/**
 * Runs the CLI and returns the exit code. Every failure a user can act on is one line on
 * stderr, `mountcrawl: CODE: message`, with no stack trace unless MOUNTCRAWL_DEBUG is set.
 */
export async function main(argv: readonly string[]): Promise<number> {
  // `mountcrawl status | head`: a reader that goes away early is not an error of ours.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(ExitCode.OK);
    throw err;
  });
  const result = { code: ExitCode.OK as number };
  const program = buildProgram(result, argv);
  if (argv.length <= 2) {
    // `mountcrawl` alone: what it can do, rather than nothing.
    process.stderr.write(program.helpInformation());
    return ExitCode.USAGE;
  }
  try {
    refuseOptionLikeValues(program, argv);
    await program.parseAsync([...argv]);
    return result.code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0;
      // Commander puts its suggestion on a line of its own ("\n(Did you mean crawl?)"): one line.
      const message = err.message
        .replace(/^error: /, '')
        .replace(/\s*\n\s*\(Did you mean ([^)]*)\)/, '; did you mean $1')
        .replace(/\s*\n\s*/g, ' ');
      // Point at the subcommand's own help when the mistake is in a subcommand's arguments.
      const sub = program.commands.find((c) => c.name() === argv[2])?.name();
      process.stderr.write(`mountcrawl: BAD_OPTION: ${message} (see mountcrawl ${sub === undefined ? '' : `${sub} `}--help)\n`);
      return ExitCode.USAGE;
    }
    if (err instanceof FatalError) {
      process.stderr.write(`mountcrawl: ${err.code}: ${err.message}\n`);
      if (process.env.MOUNTCRAWL_DEBUG) process.stderr.write(`${err.stack}\n`);
      return err.exitCode;
    }
    const code = err instanceof MountcrawlError ? err.code : 'INTERNAL';
    process.stderr.write(`mountcrawl: ${code}: ${describeError(err)}\n`);
    if (process.env.MOUNTCRAWL_DEBUG) process.stderr.write(`${(err as Error).stack}\n`);
    return ExitCode.INTERNAL;
  }
}

/** The --hook files, in the order given. */
function hookFiles(opts: CrawlOptionValues): string[] {
  return Array.isArray(opts.hook) ? (opts.hook as string[]) : [];
}

/** A supervised node's progress messages: its counters, and its hosts when they changed (src/progress/host-tally.ts). */
function progressToSupervisor(nodeId: string): (node: CrawlNode) => void {
  const changed = onlyWhenChanged();
  const metrics = process.env[METRICS_ENV] === '1';
  return (node) => {
    const hosts = changed(node.ownedHosts());
    process.send!({
      type: 'progress',
      snapshot: snapshotOf(nodeId, node.stats),
      ...(hosts === undefined ? {} : { hosts }),
      ...(metrics ? { metrics: sampleOf(node.stats) } : {}),
    } satisfies ChildMessage);
  };
}
