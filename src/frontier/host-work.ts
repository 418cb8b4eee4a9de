import { HostQueue, type QueueItem, type RetryItem } from './host-queue.js';

/**
 * The URLs of one host this node has claimed: queued, waiting to be retried, or in flight.
 * HostState extends it with the done set, the phase, politeness and robots.txt. Its invariant: a key queued or retrying is claimed; a claim given
 * back is neither.
 */
export class HostWork {
  /** Keys queued, retrying or in flight: claimed by this node. */
  readonly #claimed = new Set<string>();
  readonly #retries: RetryItem[] = [];
  readonly #queue = new HostQueue();

  /** True while the key is queued, retrying or in flight here. */
  isClaimed(key: string): boolean {
    return this.#claimed.has(key);
  }

  /** Claims a key (queued, retrying or in flight here). */
  claim(key: string): void {
    this.#claimed.add(key);
  }

  /** Gives a claim back (the URL was not done: stopped, moved, or the commit failed). */
  release(key: string): void {
    this.#claimed.delete(key);
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** Queues an item and claims its key; `first`: ahead of the others (HostQueue.push). */
  push(item: QueueItem, first = false): void {
    this.#claimed.add(item.key);
    this.#queue.push(item, first);
  }

  shift(): QueueItem | undefined {
    return this.#queue.shift();
  }

  /** Removes every queued item and retry, gives their claims back, and returns them. */
  drain(): QueueItem[] {
    const items = [...this.#queue.drain(), ...this.#retries.splice(0).map(({ dueAt: _, ...item }) => item)];
    for (const item of items) this.#claimed.delete(item.key);
    return items;
  }

  /**
   * Keeps only the queued items for which `keep` is true; returns the others, whose claims
   * are given back unless they wait as retries.
   */
  filter(keep: (item: QueueItem) => boolean): QueueItem[] {
    const dropped: QueueItem[] = [];
    for (const item of this.#queue.drain()) {
      if (keep(item)) this.#queue.push(item);
      else dropped.push(item);
    }
    for (const item of dropped) if (!this.#retries.some((r) => r.key === item.key)) this.#claimed.delete(item.key);
    return dropped;
  }

  get retries(): readonly RetryItem[] {
    return this.#retries;
  }

  /** Claims a key that waits until `dueAt` (monotonic) for its next attempt. */
  addRetry(item: QueueItem, dueAt: number): void {
    this.#claimed.add(item.key);
    this.#retries.push({ ...item, dueAt });
  }

  /** Removes the waiting retry of `key` (its claim stays); true when there was one. */
  takeRetry(key: string): boolean {
    const i = this.#retries.findIndex((r) => r.key === key);
    if (i < 0) return false;
    this.#retries.splice(i, 1);
    return true;
  }

  /** Moves retries whose time has come into the queue; returns how many. */
  promoteDueRetries(now: number): number {
    let moved = 0;
    for (let i = this.#retries.length - 1; i >= 0; i--) {
      const r = this.#retries[i]!;
      if (r.dueAt <= now) {
        this.#retries.splice(i, 1);
        const { dueAt: _, ...item } = r;
        this.#queue.push(item);
        moved++;
      }
    }
    return moved;
  }

  /** Monotonic time of the earliest retry, or Infinity. */
  nextRetryAt(): number {
    let t = Infinity;
    for (const r of this.#retries) t = Math.min(t, r.dueAt);
    return t;
  }
}
