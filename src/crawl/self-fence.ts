import type { Clock } from '../config/clock.js';

/**
 * How long after the record that ends a fence the node stays fenced, in heartbeats: a peer
 * reads nodes/ once a heartbeat (on a clock that may run slower than this node's), and one
 * that read it just before that record went out still counts this node dead, and may take
 * its hosts over, until its next read (docs/protocol.md, "Self-fencing").
 */
export const PEER_VIEW_BEATS = 1.5;

/**
 * Whether this node may act on the hosts it holds (docs/protocol.md, "Self-fencing"): not
 * while its heartbeat has not reached the mount for --dead-after / 2 (others may count it
 * dead), nor after that until a record got through and every lease was read back, starting
 * PEER_VIEW_BEATS heartbeats after that record went out.
 */
export class SelfFence {
  readonly #clock: Clock;
  readonly #o: { readonly heartbeatMs: number; readonly deadAfterMs: number };
  /** Monotonic time of the last record that reached the mount (counted from when it was sent). */
  readonly #lastBeatOk: () => number;
  /** A record went out while fenced: the leases must be read back before the fence lifts. */
  #leasesInDoubt = false;
  /** When the first record after the fence went out: peers see it from their next read. */
  #backAt: number | undefined;

  constructor(clock: Clock, options: { readonly heartbeatMs: number; readonly deadAfterMs: number }, lastBeatOk: () => number) {
    this.#clock = clock;
    this.#o = options;
    this.#lastBeatOk = lastBeatOk;
  }

  /** True when this node must not start requests nor commit pages. */
  fenced(): boolean {
    return this.#leasesInDoubt || this.#silentTooLong();
  }

  #silentTooLong(): boolean {
    return this.#clock.monotonic() - this.#lastBeatOk() > this.#o.deadAfterMs / 2;
  }

  /**
   * Before this node's record is written (the steps before may have waited on a stalled mount):
   * fenced as it goes out, the fence then holds until the leases are read back, although the
   * record gets through. True when the record goes out fenced: every lease is to be read back.
   */
  beforeRecord(): boolean {
    if (this.#silentTooLong()) {
      this.#leasesInDoubt = true;
      this.#backAt = undefined;
    }
    return this.#leasesInDoubt;
  }

  /** The record went out (Membership.beat returned). */
  recordOut(): void {
    if (this.#leasesInDoubt) this.#backAt ??= this.#lastBeatOk();
  }

  /**
   * Reads every lease back (`read`, which lets go of those lost) and lifts the fence, unless
   * the reads began less than PEER_VIEW_BEATS heartbeats after the record that ended it (a
   * peer may take a host over after them): then the next read-back decides.
   */
  async readLeasesBack(read: () => Promise<void>): Promise<void> {
    const from = this.#clock.monotonic();
    await read();
    if (this.#backAt !== undefined && from < this.#backAt + PEER_VIEW_BEATS * this.#o.heartbeatMs) return;
    this.#leasesInDoubt = false;
    this.#backAt = undefined;
  }
}
