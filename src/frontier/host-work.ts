import { KeySet } from '../url/key-set.js';
import { HostQueue, type QueueItem, type RetryItem } from './host-queue.js';
import type { SpillFile } from './spill-file.js';

/**
 * The URLs of one host this node has claimed: queued, waiting to be retried, or in flight.
 * HostState extends it with the done set, the phase, politeness and robots.txt. Its invariant: a key queued or retrying is claimed; a claim given
 * back is neither.
 *
 * The queue has a head in memory (a HostQueue, in priority order) and, once the node's
 * queues outgrow their memory budget (the Frontier decides), a tail in a spill file
 * (docs/protocol.md, "Memory"): items spilled are taken back in the order they were spilled,
 * after the head. While the tail is not empty every item joins it, except those queued
 * `first`, so the order of a breadth-first queue is kept. The keys of the tail are claimed
 * through 64-bit fingerprints (KeySet), not strings: two taken for one leave the second for a
 * later offer (docs/protocol.md, "Memory").
 */
export class HostWork {
  /** Keys queued in memory, retrying or in flight: claimed by this node. */
  readonly #claimed = new Set<string>();
  readonly #retries: RetryItem[] = [];
  readonly #queue = new HostQueue();
  /** URLs offered while the host is left alone for this run, claimed: they go with the host if it moves (drain). */
  readonly #setAside: QueueItem[] = [];
  /** The tail of the queue, and the claims of its keys. */
  #spill: SpillFile | undefined;
  #spilledKeys: KeySet | undefined;

  /** True while the key is queued, retrying or in flight here. */
  isClaimed(key: string): boolean {
    return this.#claimed.has(key) || this.#spilledKeys?.has(key) === true;
  }

  /** Claims a key (queued, retrying or in flight here). */
  claim(key: string): void {
    this.#claimed.add(key);
  }

  /** Gives a claim back (the URL was not done: stopped, moved, or the commit failed). */
  release(key: string): void {
    this.#claimed.delete(key);
  }

  /** URLs queued, in memory and spilled. */
  get queued(): number {
    return this.#queue.length + (this.#spill?.length ?? 0);
  }

  /** URLs queued in memory. */
  get inMemory(): number {
    return this.#queue.length;
  }

  /** URLs queued in the spill file. */
  get spilled(): number {
    return this.#spill?.length ?? 0;
  }

  /** Queues an item at the tail, in the spill file (`open` makes it at the first spill), and claims its key. */
  spill(item: QueueItem, open: () => SpillFile): void {
    this.#spill ??= open();
    this.#spilledKeys ??= new KeySet(64);
    this.#spilledKeys.add(item.key);
    this.#spill.append(item);
  }

  /** Moves the next items of the spill file into memory, in their order; returns how many. */
  unspill(): number {
    const items = this.#spill?.take() ?? [];
    for (const item of items) {
      this.#spilledKeys!.delete(item.key);
      this.#claimed.add(item.key);
      this.#queue.push(item);
    }
    return items.length;
  }

  /** Removes the spill file (the host is forgotten); what it held is given back. */
  closeSpill(): void {
    this.#spill?.close();
    this.#spill = undefined;
    this.#spilledKeys = undefined;
  }

  /** Queues an item and claims its key; `first`: ahead of the others (HostQueue.push). */
  push(item: QueueItem, first = false): void {
    this.#claimed.add(item.key);
    this.#queue.push(item, first);
  }

  shift(): QueueItem | undefined {
    return this.#queue.shift();
  }

  /** Keeps a URL of a host left alone for this run, claimed, not queued: it is never fetched here, only handed on. */
  setAside(item: QueueItem): void {
    this.#claimed.add(item.key);
    this.#setAside.push(item);
  }

  /** Removes every queued item (spilled ones too), retry and URL set aside, gives their claims back, and returns them. */
  drain(): QueueItem[] {
    const retries = this.#retries.splice(0).map(({ dueAt: _, ...item }) => item);
    const items = [...this.#queue.drain(), ...this.#takeSpilled(), ...retries, ...this.#setAside.splice(0)];
    for (const item of items) this.#claimed.delete(item.key);
    this.closeSpill();
    return items;
  }

  /** Every item of the spill file, in order; their claims move to memory. */
  #takeSpilled(): QueueItem[] {
    const items: QueueItem[] = [];
    while (this.spilled > 0) {
      for (const item of this.#spill!.take()) {
        this.#spilledKeys!.delete(item.key);
        this.#claimed.add(item.key);
        items.push(item);
      }
    }
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
    // The spill file is read whole and what is kept written again, in its order.
    if (this.spilled > 0) {
      for (const item of this.#takeSpilled()) {
        if (keep(item)) {
          this.#claimed.delete(item.key);
          this.spill(item, () => this.#spill!);
        } else dropped.push(item);
      }
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
