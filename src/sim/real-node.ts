import { CrawlNode } from '../crawl/crawl-node.js';
import type { Fetcher } from '../fetch/fetcher.js';
import type { Logger } from '../progress/logger.js';
import type { NodeFactory, SimNodeEnv } from './sim-run.js';

/**
 * The real node in a simulated run (docs/simulator.md): a CrawlNode given the process's
 * clock, its view of the simulated mount, the simulated site as its fetcher and the run's
 * random ids; its log lines go to the trace.
 */
export const realNode: NodeFactory = (env: SimNodeEnv) =>
  new CrawlNode(env.config, {
    clock: env.clock,
    logger: traceLogger(env),
    fs: env.fs,
    fetcher: env.fetcher as Fetcher,
    random: env.random,
  });

function traceLogger(env: SimNodeEnv): Logger {
  const line = (level: string, message: string, fields?: Record<string, unknown>): void =>
    env.log(`${level} ${message}${fields === undefined ? '' : ` ${JSON.stringify(fields)}`}`);
  return {
    debug: (m, f) => line('debug', m, f),
    info: (m, f) => line('info', m, f),
    warn: (m, f) => line('warn', m, f),
    error: (m, f) => line('error', m, f),
  };
}
