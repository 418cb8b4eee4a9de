import type { Clock, Timer } from '../../src/config/clock.js';

interface FakeTimer {
  readonly __timer: true;
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/**
 * A clock that moves only when a test says so (docs/architecture.md, "Time"): monotonic time
 * for durations and liveness, wall time for what is written to disk. Both advance together;
 * timers due by then fire in the order of their time (then of their making).
 */
export class FakeClock implements Clock {
  #mono: number;
  #wall: number;
  #seq = 0;
  readonly #timers = new Set<FakeTimer>();

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

  setTimeout(fn: () => void, ms: number): Timer {
    const t: FakeTimer = { __timer: true, at: this.#mono + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.add(t);
    return t;
  }

  clearTimeout(timer: Timer | undefined): void {
    this.#timers.delete(timer as FakeTimer);
  }

  /** Timers not fired yet. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves both clocks forward by `ms`, firing every timer that comes due on the way. */
  advance(ms: number): void {
    const end = this.#mono + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const t of this.#timers)
        if (t.at <= end && (next === undefined || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (next === undefined) break;
      this.#timers.delete(next);
      this.#step(next.at - this.#mono);
      next.fn();
    }
    this.#step(end - this.#mono);
  }

  #step(ms: number): void {
    this.#mono += ms;
    this.#wall += ms;
  }
}
