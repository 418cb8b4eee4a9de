import { defaultPriority } from '../hooks/url-priority.js';
import type { Referrer } from '../store/records.js';

/** A URL waiting in a host's queue. */
export interface QueueItem {
  readonly url: string;
  readonly key: string;
  readonly depth: number;
  /** Its place in the host's queue (docs/hooks.md, `priority`); minus the depth when absent. */
  readonly priority?: number;
  /** The page whose links offered it (none for a seed): its errs record names it (docs/protocol.md). */
  readonly referrer?: Referrer;
}

/** A URL that failed transiently and waits for its next attempt. */
export interface RetryItem extends QueueItem {
  /** Monotonic time of the next attempt. */
  readonly dueAt: number;
}

interface Entry {
  readonly item: QueueItem;
  readonly rank: number;
  readonly seq: number;
}

/**
 * One host's queue, ordered by priority (docs/hooks.md, `priority`): the higher first, and
 * among equals the first queued first. Without a --hook priority an item's priority is minus
 * its depth, so the queue is breadth first. A binary heap: push and shift in O(log n).
 */
export class HostQueue {
  #heap: Entry[] = [];
  #seq = 0;

  get length(): number {
    return this.#heap.length;
  }

  /** Queues `item`; `first`: ahead of every item not pushed `first` (a URL that will not be fetched). */
  push(item: QueueItem, first = false): void {
    const heap = this.#heap;
    heap.push({ item, rank: first ? Infinity : (item.priority ?? defaultPriority(item.depth)), seq: this.#seq++ });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  shift(): QueueItem | undefined {
    const heap = this.#heap;
    if (heap.length === 0) return undefined;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < heap.length && before(heap[l]!, heap[best]!)) best = l;
        if (r < heap.length && before(heap[r]!, heap[best]!)) best = r;
        if (best === i) break;
        [heap[i], heap[best]] = [heap[best]!, heap[i]!];
        i = best;
      }
    }
    return top.item;
  }

  /** Removes and returns every item, in the order they would have been shifted. */
  drain(): QueueItem[] {
    const entries = this.#heap.sort((a, b) => (before(a, b) ? -1 : 1));
    this.#heap = [];
    return entries.map((e) => e.item);
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.rank > b.rank || (a.rank === b.rank && a.seq < b.seq);
}
