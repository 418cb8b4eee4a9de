import type { Clock, Timer } from '../config/clock.js';
import type { Scheduler, Scheduled } from './scheduler.js';

interface SimTimer {
  readonly __timer: true;
  readonly event: Scheduled;
}

/** 2025-01-15T12:00:00Z: the wall time at which every simulated run starts, before each machine's offset. */
const WALL_START = 1_736_942_400_000;

/**
 * The clock of one simulated process (docs/simulator.md): built on the run's virtual time, running
 * `rate` times as fast (machines' clocks drift), its wall time off by `offsetMs`, its monotonic
 * origin its own. Its timers are events of its process: held while it is paused, dropped when
 * it is killed.
 */
export class SimClock implements Clock {
  readonly #sched: Scheduler;
  readonly #owner: string;
  readonly #rate: number;
  readonly #offsetMs: number;
  readonly #origin: number;

  constructor(sched: Scheduler, owner: string, options: { rate: number; offsetMs: number; origin: number }) {
    this.#sched = sched;
    this.#owner = owner;
    this.#rate = options.rate;
    this.#offsetMs = options.offsetMs;
    this.#origin = options.origin;
  }

  now(): number {
    return Math.floor(WALL_START + this.#offsetMs + this.#sched.now * this.#rate);
  }

  monotonic(): number {
    return this.#origin + this.#sched.now * this.#rate;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const t: SimTimer = { __timer: true, event: this.#sched.after(Math.max(0, ms) / this.#rate, fn, this.#owner) };
    return t;
  }

  clearTimeout(timer: Timer | undefined): void {
    (timer as SimTimer | undefined)?.event?.cancel();
  }
}

/** The file server's wall clock (mtimes): virtual time from the same start, no drift. */
export function serverWall(sched: Scheduler): number {
  return Math.floor(WALL_START + sched.now);
}
