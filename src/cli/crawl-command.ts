import { systemClock } from '../config/clock.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import type { SettingsInputs } from '../config/crawl-settings.js';
import { LiveSettings } from '../config/live-settings.js';
import { settleSettings } from '../config/settings-file.js';
import { ExitCode } from '../errors.js';
import { CrawlNode, type RunResult } from '../crawl/crawl-node.js';
import type { Hooks } from '../hooks/hooks.js';
import { StreamLogger } from '../progress/logger.js';
import { ProgressDisplay } from '../progress/progress-display.js';
import { snapshotOf } from '../progress/snapshot.js';
import { formatSummary, summaryOf } from '../progress/summary.js';
import { politenessStartLine } from '../progress/politeness-notes.js';
import { openDataDir } from '../store/data-dir.js';
import { removeNodeEnds, writeRunState } from '../store/run-state.js';
import { NORMALIZATION_VERSION } from '../url/normalize.js';
import { refuseWithoutSeeds } from './seeds-first.js';
import { othersAlive } from './node-records.js';
import { holdingsLine, holdingsOf, judgeOutcome, recordRunEnd } from './run-outcome.js';

/** Hooks a child of --processes gets: where to send progress instead of drawing it. */
export interface CrawlHooks {
  readonly onProgress?: (node: CrawlNode) => void;
  /** After the run, before the process ends: what the node knows of the hosts it held (CrawlNode.heldErrs). */
  readonly onEnd?: (node: CrawlNode) => Promise<void>;
}

/** What a node's settings are made of besides its configuration (src/config/settings-file.ts). */
export interface CrawlStart extends SettingsInputs {
  /** The crawl settings given on the command line: they must agree with the crawl's. */
  readonly given: ReadonlySet<string>;
}

/**
 * Runs one node in this process: progress display, Ctrl-C / SIGTERM handling (first: stop
 * gracefully; second: exit at once), and the end summary. Returns the exit code.
 */
export async function runCrawl(options: CrawlConfig, start: CrawlStart, hooks: CrawlHooks = {}, userHooks?: Hooks): Promise<number> {
  await refuseWithoutSeeds(options);
  // The data-directory check every command makes (it names a directory that cannot be
  // written, before any heartbeat tries); then `status` can tell that a run is under way.
  const { layout } = await openDataDir(options.dataDir, options.nodeId, {
    version: NORMALIZATION_VERSION,
    sessionParams: [...options.normalize.sessionParams].sort(),
  });
  // The crawl's settings before anything else of the crawl is written (docs/operations.md, "One configuration").
  const settled = await settleSettings(options, start, start.given, () => othersAlive(layout, options.nodeId));
  const live = new LiveSettings(settled.config, settled.record);
  const config = live.config;
  // A port that cannot be had ends the start here, before the run state says running.
  let scraped: CrawlNode | undefined;
  const metrics = config.metrics && (await import('../metrics/metrics-server.js'));
  const served =
    metrics && (await metrics.serveSamples(config.metrics!, () => (scraped ? [[config.nodeId, metrics.sampleOf(scraped.stats)]] : [])));
  await writeRunState(layout, { state: 'running', node: config.nodeId, at: new Date().toISOString(), maxAttempts: config.maxAttempts });
  // What nodes that ended before left is the crawl's again (reseeds find it): `status` counts it
  // from the ends of the nodes of this run (src/store/run-state.ts).
  await removeNodeEnds(layout, 'all');
  const logger = new StreamLogger({ json: config.json, verbose: config.verbose, quiet: !config.progress, nodeId: config.nodeId });
  const node = new CrawlNode(config, { clock: systemClock, logger, live, ...(userHooks ? { hooks: userHooks } : {}) });
  scraped = node;
  if (served) logger.info(`metrics at ${served.url}`);
  for (const line of settled.changed) logger.info(`a new run changes the crawl's settings (revision ${settled.record.revision}): ${line}`);
  const display = new ProgressDisplay({ enabled: config.progress && hooks.onProgress === undefined, json: config.json }, logger);
  const started = systemClock.monotonic();

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      display.stop();
      process.stderr.write('mountcrawl: stopped at once (partial files are never visible; a rerun resumes)\n');
      process.exit(signal === 'SIGINT' ? ExitCode.INTERRUPTED : ExitCode.TERMINATED);
    }
    logger.warn(`${signal}: stopping after the requests in flight (again to quit at once)`);
    node.stop(signal === 'SIGINT' ? ExitCode.INTERRUPTED : ExitCode.TERMINATED);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const progressTimer = hooks.onProgress ? setInterval(() => hooks.onProgress!(node), 500) : undefined;

  display.start(() => [snapshotOf(config.nodeId, node.stats)]);
  if (hooks.onProgress === undefined) logger.info(politenessStartLine(config));

  let result: RunResult;
  try {
    result = await node.run();
  } finally {
    if (progressTimer) clearInterval(progressTimer);
    await served?.close();
    display.stop([snapshotOf(config.nodeId, node.stats)]);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  hooks.onProgress?.(node);
  await hooks.onEnd?.(node);
  await recordRunEnd(
    layout,
    config,
    result,
    {
      queued: node.stats.queued,
      leftOnDisk: node.stats.cut.frontierFull,
      ...(node.stats.queuedByHost ? { byHost: node.stats.queuedByHost } : {}),
    },
    node.endedAs,
  );
  // A supervised child leaves the data directory's totals (and the verdict on them) to its supervisor.
  const held = hooks.onProgress === undefined ? await holdingsOf(layout, config.maxAttempts, node.heldErrs) : undefined;
  if (held !== undefined) result = judgeOutcome(result, held);
  const seconds = (systemClock.monotonic() - started) / 1000;
  if (config.json) {
    process.stderr.write(
      `${JSON.stringify({ level: 'info', node: config.nodeId, msg: 'summary', ...summaryOf(node.stats, seconds, result.reason), ...(held ? { dataDirectory: { pages: held.pages, errors: held.errors } } : {}) })}\n`,
    );
  } else {
    process.stderr.write(`${formatSummary(node.stats, seconds, result.reason)}\n`);
    if (held !== undefined) process.stderr.write(`${holdingsLine(held)}\n`);
  }
  if (result.message !== undefined) {
    if (result.exitCode === ExitCode.OK) logger.info(result.message);
    else logger.error(result.message);
  }
  return result.exitCode;
}
