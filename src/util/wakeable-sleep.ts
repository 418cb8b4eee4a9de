import type { Clock, Timer } from '../config/clock.js';

/**
 * A sleep on a clock that a wake ends early: a node's control loop sleeps here between its
 * turns, and what it must act on (work ready, a peer changed, a stop) wakes it. One sleeper at
 * a time; a wake with nobody asleep does nothing.
 */
export class WakeableSleep {
  readonly #clock: Clock;
  #wake: (() => void) | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Waits `ms` on the clock, or until wake(). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: Timer | undefined;
      const done = (): void => {
        this.#clock.clearTimeout(timer);
        if (this.#wake === done) this.#wake = undefined;
        resolve();
      };
      timer = this.#clock.setTimeout(done, ms);
      this.#wake = done;
    });
  }

  /** Ends the sleep in progress, if any. */
  wake(): void {
    this.#wake?.();
  }
}
