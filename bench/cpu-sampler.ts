import { availableParallelism } from 'node:os';
import { machineBusySeconds, round } from './measure.js';

/** The whole machine's CPU over a run (/proc/stat: every process, not only the bench's). */
export interface MachineCpu {
  /** CPU seconds used. */
  readonly seconds: number;
  /** Cores busy on average over the run, and in its busiest sampling interval. */
  readonly meanCores: number;
  readonly peakCores: number;
  /** Cores the machine has: the limit both are set against. */
  readonly cores: number;
}

/**
 * Samples the machine's busy CPU every `intervalMs` from `start()` to `stop()`, so that a run
 * can show whether the machine was its limit (a peak near `cores`) or not.
 */
export class CpuSampler {
  #timer: NodeJS.Timeout | undefined;
  #first = { busy: 0, at: 0 };
  #last = { busy: 0, at: 0 };
  #peak = 0;

  constructor(private readonly intervalMs = 1000) {}

  start(): void {
    this.#first = this.#last = { busy: machineBusySeconds(), at: performance.now() };
    this.#peak = 0;
    this.#timer = setInterval(() => this.#sample(), this.intervalMs);
  }

  #sample(): void {
    const now = { busy: machineBusySeconds(), at: performance.now() };
    const seconds = (now.at - this.#last.at) / 1000;
    if (seconds > 0) this.#peak = Math.max(this.#peak, (now.busy - this.#last.busy) / seconds);
    this.#last = now;
  }

  stop(): MachineCpu {
    clearInterval(this.#timer);
    // The last interval counts for the peak only when it is long enough to be one.
    if (performance.now() - this.#last.at >= this.intervalMs / 2) this.#sample();
    const busy = machineBusySeconds() - this.#first.busy;
    const wall = (performance.now() - this.#first.at) / 1000;
    const mean = wall > 0 ? busy / wall : 0;
    return {
      seconds: round(busy, 1),
      meanCores: round(mean, 2),
      peakCores: round(Math.max(this.#peak, mean), 2),
      cores: availableParallelism(),
    };
  }
}
