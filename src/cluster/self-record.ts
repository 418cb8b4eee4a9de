import { hostname } from 'node:os';
import type { Clock } from '../config/clock.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import type { Layout } from '../store/layout.js';
import { bootId } from './local-liveness.js';
import type { NodeRecord, NodeState } from './node-record.js';

/** What this node says about itself at each heartbeat. */
export type SelfStatus = Pick<
  NodeRecord,
  'state' | 'round' | 'hostsOwned' | 'pages' | 'errors' | 'excluded' | 'queued' | 'inFlight' | 'rate' | 'spare' | 'wanting' | 'lent'
>;

export interface SelfRecordOptions {
  readonly nodeId: string;
  readonly heartbeatMs: number;
  readonly deadAfterMs: number;
}

export interface SelfRecordDeps {
  readonly clock: Clock;
  /**
   * Monotonic time of this node's first step on the mount (its start, before the data
   * directory's check writes there): its silence counts from then until its first record goes
   * out, since a peer that saw those files counts it alive only for --dead-after (Membership.isGone).
   */
  readonly since?: number;
  /**
   * A record went out more than half of dead-after after the one before it: others may have
   * counted this node dead meanwhile, taken its hosts or written off hosts it would have
   * gained (docs/protocol.md, "Self-fencing"). Called when the write is done; the node asks
   * for a full reseed then, so that it lends no host until one has read everything.
   */
  onSilence?(): void;
}

/**
 * This node's own record, nodes/<id>.json (docs/protocol.md, "Nodes and liveness"): its
 * counter grows at every beat; its idle epoch grows each time the node turns idle. Membership
 * holds it beside its view of the other nodes.
 */
export class SelfRecord {
  readonly #layout: Layout;
  readonly #options: SelfRecordOptions;
  readonly #clock: Clock;
  readonly #onSilence: (() => void) | undefined;
  readonly #startedAt: string;
  /** Random per process (NodeRecord.incarnation): its leases name it too. */
  readonly incarnation: string;
  #counter = 0;
  #idleEpoch = 0;
  #idleSince: number | undefined;
  #lastBeatOk: number;
  #serverTime: { mtimeMs: number; at: number } | undefined;
  /** leave() was called: no beat writes the record again (it would stay behind, a node that looks dead). */
  #left = false;
  /** NodeRecord.settled: the view an empty reseed of this idle epoch was taken in. */
  #settled = '';

  constructor(layout: Layout, options: SelfRecordOptions, deps: SelfRecordDeps) {
    const { clock } = deps;
    this.#layout = layout;
    this.#options = options;
    this.#clock = clock;
    this.#onSilence = deps.onSilence;
    this.#startedAt = new Date(clock.now()).toISOString();
    this.incarnation = layout.mount.newId();
    this.#lastBeatOk = deps.since ?? clock.monotonic();
  }

  get idleEpoch(): number {
    return this.#idleEpoch;
  }

  /** An empty reseed of this idle epoch, begun after every live node was seen idle, was taken in view `key`. */
  settle(key: string): void {
    if (this.#idleSince !== undefined) this.#settled = key;
  }

  /** Monotonic time since which this node is idle (in its current idle epoch), or undefined. */
  get idleSince(): number | undefined {
    return this.#idleSince;
  }

  /** Monotonic time of the last heartbeat that reached the mount. */
  get lastBeatOk(): number {
    return this.#lastBeatOk;
  }

  /**
   * The mount's clock as last seen (the mtime the server gave our heartbeat file) and the
   * monotonic time it was read at: a lower bound of the server's time for what follows.
   */
  get serverTime(): { mtimeMs: number; at: number } | undefined {
    return this.#serverTime;
  }

  /**
   * Notes this node's state at once (the next beat publishes it): idle starts a new idle
   * epoch, anything else ends it.
   */
  setState(state: NodeState): void {
    if (state === 'idle') {
      if (this.#idleSince === undefined) {
        this.#idleSince = this.#clock.monotonic();
        this.#idleEpoch++;
        this.#settled = '';
      }
    } else {
      this.#idleSince = undefined;
      this.#settled = '';
    }
  }

  /** Writes this node's record (nothing once it left). Throws what the file system throws. */
  async beat(status: SelfStatus): Promise<void> {
    if (this.#left) return;
    const now = this.#clock.monotonic();
    this.setState(status.state);
    const record: NodeRecord = {
      id: this.#options.nodeId,
      counter: ++this.#counter,
      idleEpoch: this.#idleEpoch,
      hostname: hostname(),
      pid: process.pid,
      bootId: bootId(),
      heartbeatMs: this.#options.heartbeatMs,
      startedAt: this.#startedAt,
      incarnation: this.incarnation,
      settled: this.#settled,
      updatedAt: new Date(this.#clock.now()).toISOString(),
      ...status,
    };
    const path = this.#layout.node(this.#options.nodeId);
    await writeFileAtomic(this.#layout.mount, path, `${JSON.stringify(record, null, 1)}\n`, { nodeId: this.#options.nodeId, fsync: false });
    // When the write was sent, not when its answer came: a node paused between the two was
    // silent for the pause, and others may have counted it dead (docs/protocol.md, "Self-fencing").
    if (this.#clock.monotonic() - this.#lastBeatOk > this.#options.deadAfterMs / 2) this.#onSilence?.();
    this.#lastBeatOk = now;
    const s = await this.#layout.fs.stat(path);
    this.#serverTime = { mtimeMs: s.mtimeMs, at: now };
  }

  /** The counter of the latest record this node wrote. */
  get counter(): number {
    return this.#counter;
  }

  /** Removes this node's record (graceful exit): others stop counting it at their next read. */
  async leave(): Promise<void> {
    this.#left = true;
    await this.#layout.fs.unlink(this.#layout.node(this.#options.nodeId)).catch(() => undefined);
  }
}
