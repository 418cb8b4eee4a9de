import type { Clock } from '../config/clock.js';

/**
 * The requests in flight of a node (RequestRunner), as the promises that run them: a task's
 * error goes to `onError` (the node's onStoreError), and `drain` waits for the tasks still
 * running at shutdown, at most a grace period. A task leaves the set when it ends.
 */
export class InFlightTasks {
  readonly #tasks = new Set<Promise<void>>();
  readonly #clock: Clock;
  readonly #onError: (err: unknown) => void;

  constructor(clock: Clock, onError: (err: unknown) => void) {
    this.#clock = clock;
    this.#onError = onError;
  }

  /** Keeps `task` until it ends; its rejection is handed to `onError`. */
  track(task: Promise<void>): void {
    const t = task.catch((err) => this.#onError(err)).finally(() => this.#tasks.delete(t));
    this.#tasks.add(t);
  }

  /** Waits for the tasks in flight, at most `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    const clock = this.#clock;
    const deadline = clock.monotonic() + graceMs;
    while (this.#tasks.size > 0 && clock.monotonic() < deadline) {
      let timer: ReturnType<typeof clock.setTimeout> | undefined;
      const pause = new Promise<void>((resolve) => {
        timer = clock.setTimeout(resolve, Math.max(1, Math.min(250, deadline - clock.monotonic())));
      });
      await Promise.race([Promise.allSettled([...this.#tasks]), pause]);
      clock.clearTimeout(timer);
    }
  }
}
