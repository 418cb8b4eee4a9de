/**
 * Collects items and hands them on once per turn of the event loop, all in one call: what a
 * worker thread is sent (WriteThread's writes, ExtractThread's pages), one message for every
 * item of a turn instead of one each.
 */
export class TurnBatch<T> {
  readonly #send: (items: T[]) => void;
  #items: T[] = [];
  #scheduled = false;

  constructor(send: (items: T[]) => void) {
    this.#send = send;
  }

  push(item: T): void {
    this.#items.push(item);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      if (this.#items.length === 0) return;
      const items = this.#items;
      this.#items = [];
      this.#send(items);
    });
  }

  /** Drops the items not handed on yet. */
  clear(): void {
    this.#items = [];
  }
}
