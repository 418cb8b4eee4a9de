import type { Clock } from '../../src/config/clock.js';

/**
 * A clock that moves only when a test says so (STYLE §6): monotonic time for durations and
 * liveness, wall time for what is written to disk. Both advance together.
 */
export class FakeClock implements Clock {
  #mono: number;
  #wall: number;

  constructor(start: { monotonic?: number; wall?: number } = {}) {
    this.#mono = start.monotonic ?? 1_000_000;
    this.#wall = start.wall ?? Date.UTC(2025, 0, 15, 12, 0, 0);
  }

  now(): number {
    return this.#wall;
  }

  monotonic(): number {
    return this.#mono;
  }

  /** Moves both clocks forward by `ms`. */
  advance(ms: number): void {
    this.#mono += ms;
    this.#wall += ms;
  }
}
