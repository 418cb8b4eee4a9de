import type { Ownership } from '../cluster/ownership.js';
import type { CrawlConfig } from '../config/crawl-config.js';
import { ExitCode, FatalError, describeError } from '../errors.js';
import type { Logger } from '../progress/logger.js';
import type { RunResult } from './crawl-node.js';
import type { Heartbeat } from './heartbeat.js';
import type { Parts } from './node-parts.js';

/** What NodeFaults needs of its node. */
export interface NodeFaultsDeps {
  readonly config: CrawlConfig;
  readonly ownership: Ownership;
  readonly heartbeat: Heartbeat;
  readonly parts: Parts;
  /** The result the node is stopping with; undefined while it runs. */
  stopping(): RunResult | undefined;
  /** Waits `ms` on the node's clock, or until the node's loop is woken. */
  sleep(ms: number): Promise<void>;
}

/**
 * How a node (CrawlNode) lives through failures of the mount (docs/architecture.md): MountGuard
 * notes the fault and fetching stops; this waits it out, probing the mount, until it works again
 * or --mount-retry runs out (exit MOUNT), and retries a step (the join) that a fault broke off.
 */
export class NodeFaults {
  readonly #d: NodeFaultsDeps;

  constructor(deps: NodeFaultsDeps) {
    this.#d = deps;
  }

  /**
   * Runs `step` until it succeeds: a failure of the mount on the way is waited out (waitOut) and
   * the step starts again, so every part of it must be repeatable; any other error is thrown.
   * Returns a result when the node must stop instead.
   */
  async retry(step: () => Promise<void>): Promise<RunResult | undefined> {
    const p = this.#d.parts;
    for (;;) {
      const stopping = this.#d.stopping();
      if (stopping) return stopping;
      try {
        await step();
        return undefined;
      } catch (err) {
        if (err instanceof FatalError || p.guard.classify(err) === undefined) throw err;
      }
      const failed = await this.waitOut();
      if (failed) return failed;
    }
  }

  /** Probes the mount until it works again; returns the final result when --mount-retry runs out. */
  async waitOut(): Promise<RunResult | undefined> {
    const p = this.#d.parts;
    while (!this.#d.stopping()) {
      const fault = p.guard.fault!;
      if (p.guard.expired()) {
        return {
          reason: 'mount-failed',
          exitCode: ExitCode.MOUNT,
          message: `${fault.code}: ${fault.message} (gave up after ${Math.round(this.#d.config.mountRetryMs / 1000)} s)`,
        };
      }
      await this.#d.sleep(Math.min(2_000, this.#d.config.heartbeatMs));
      try {
        await p.guard.checkMarker();
        const { fence } = this.#d.heartbeat;
        fence.beforeRecord();
        await p.membership.beat(this.#d.heartbeat.status('waiting'));
        fence.recordOut();
        await p.store.probe();
        await fence.readLeasesBack(async () => {
          if (this.#d.ownership.partition === 'host') p.keeper.dropLost(await p.leases.verify('all'));
        });
        // Pages fetched but not written when the fault came, of the hosts whose leases were just
        // read back as this node's (temporary files it left go at the next heartbeat, which
        // removes them once its own record is written). Not requeued while the fence waits
        // for peers to see this node back: they would be fetched again.
        await p.requests.commitUnwritten(true);
      } catch {
        continue; // still failing
      }
      p.guard.cleared();
      p.requests.pump();
      return undefined;
    }
    return undefined;
  }
}

/**
 * The result a node stops with after an error that is not of the mount (a bug): `stopping` when
 * it already stops; it is logged unless the node already stops for such an error.
 */
export function internalStop(err: unknown, log: Logger, stopping: RunResult | undefined): RunResult {
  if (stopping?.exitCode !== ExitCode.INTERNAL) {
    log.error(`INTERNAL: ${describeError(err)} (a bug: please report it with MOUNTCRAWL_DEBUG=1 output)`);
    if (process.env.MOUNTCRAWL_DEBUG) log.error(String((err as Error).stack));
  }
  return stopping ?? { reason: 'stopped', exitCode: ExitCode.INTERNAL, message: `INTERNAL: ${describeError(err)}` };
}
