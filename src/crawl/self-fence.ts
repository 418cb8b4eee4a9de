/**
 * Self-fencing (docs/protocol.md, "Self-fencing"): a node that has not reached the mount for
 * half of --dead-after may be counted dead by others, so it starts no request and commits no
 * page. Its fence lifts once a heartbeat got through and it has read back every lease it holds
 * twice, at that beat and at the next: a peer that counted it dead on a view of nodes/ from
 * before the beat may take a lease over just after the first read-back, and the second sees it.
 */
export class SelfFence {
  readonly #silentFor: () => number;
  readonly #limitMs: number;
  /** Read-backs of every lease still owed before the fence lifts. */
  #readBacksOwed = 0;

  /** `silentFor`: how long since the node's last heartbeat got through (from when it was sent). */
  constructor(silentFor: () => number, deadAfterMs: number) {
    this.#silentFor = silentFor;
    this.#limitMs = deadAfterMs / 2;
  }

  /** True while others may count this node dead, or its leases are not read back yet. */
  get fenced(): boolean {
    return this.#readBacksOwed > 0 || this.#silentFor() > this.#limitMs;
  }

  /** As a heartbeat's record goes out: true when it goes out fenced (the leases are then read back in full). */
  beatGoesOut(): boolean {
    if (this.#silentFor() > this.#limitMs) this.#readBacksOwed = 2;
    return this.#readBacksOwed > 0;
  }

  /** Every lease was read back after a heartbeat got through. */
  leasesReadBack(): void {
    this.#readBacksOwed = Math.max(0, this.#readBacksOwed - 1);
  }
}
