import { baseConfig, type CrawlConfig } from '../config/crawl-config.js';
import type { Random } from './random.js';

/** Where the simulated mount holds the data directory. */
export const SIM_DATA_DIR = '/sim/data';

/** The settings of a run that its nodes share, drawn from its generator. */
export interface SimSettings {
  readonly perHost: number;
  readonly concurrency: number;
  readonly heartbeatMs: number;
  readonly deadAfterMs: number;
  readonly delayMs: number;
}

/**
 * A run's shared settings: short heartbeats and dead-after times so that pauses, stalls and
 * restarts matter within seconds of virtual time; retries a second or two apart.
 */
export function drawSettings(rng: Random): SimSettings {
  return {
    perHost: rng.between(1, 2),
    concurrency: rng.between(2, 6),
    heartbeatMs: 200,
    deadAfterMs: 2000,
    delayMs: rng.pick([50, 100, 200, 400]),
  };
}

/** The configuration of one simulated node, as the CLI would make it (docs/options.md). */
export function simNodeConfig(settings: SimSettings, nodeId: string, seedUrls: readonly string[]): CrawlConfig {
  return baseConfig(SIM_DATA_DIR, nodeId, {
    seedUrls,
    scope: 'any',
    userAgent: 'mountcrawl-sim',
    perHost: settings.perHost,
    concurrency: settings.concurrency,
    delayMs: settings.delayMs,
    heartbeatMs: settings.heartbeatMs,
    deadAfterMs: settings.deadAfterMs,
    mountRetryMs: 30_000,
    retryBaseMs: 300,
    retryMaxMs: 3000,
    maxAttempts: 4,
    timeoutMs: 10_000,
  });
}
