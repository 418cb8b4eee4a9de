import type { Clock } from '../config/clock.js';

/** Main-thread time a scan works at a stretch before it lets the crawl run. */
export const SLICE_MS = 10;
/**
 * The share of the main thread a scan takes while the node's request slots are all taken: the
 * crawl keeps at least four fifths of it (docs/benchmarks.md counts 80% of a node's best
 * second as full speed).
 */
export const SCAN_SHARE = 0.2;
/** Offers between two looks at the clock. */
const CHECK_EVERY = 64;

/**
 * Gives the crawl priority over a scan of the mount (docs/protocol.md, "Host summaries"): a
 * scan shares the main thread with the node's requests, and the first one of a big crawl
 * offers millions of links (minutes of CPU). Every SLICE_MS of work it yields: at once
 * (the requests' callbacks run first) when the node has free request slots, since then the
 * crawl waits for the work the scan finds; else for as long as keeps the scan to
 * SCAN_SHARE of the thread, so that a node crawls at nearly its full speed while the rest
 * of its frontier is read. With a fake clock that does not move during work it never yields.
 */
export class ScanPacer {
  readonly #clock: Clock;
  readonly #saturated: () => boolean;
  #sliceStart: number;
  #count = 0;
  #pausing: Promise<void> | undefined;

  constructor(clock: Clock, saturated: () => boolean) {
    this.#clock = clock;
    this.#saturated = saturated;
    this.#sliceStart = clock.monotonic();
  }

  /** Whether the scan has worked a slice and must call pause() now; cheap, called per `offers` offers made. */
  due(offers = 1): boolean {
    this.#count += offers;
    if (this.#count < CHECK_EVERY) return false;
    this.#count = 0;
    return this.#clock.monotonic() - this.#sliceStart >= SLICE_MS;
  }

  /** Lets the crawl run, and starts a new slice; parts of a scan that call it meanwhile wait for the same pause. */
  pause(): Promise<void> {
    this.#pausing ??= this.#wait().finally(() => {
      this.#pausing = undefined;
      this.#sliceStart = this.#clock.monotonic();
    });
    return this.#pausing;
  }

  async #wait(): Promise<void> {
    const worked = this.#clock.monotonic() - this.#sliceStart;
    if (!this.#saturated()) return new Promise<void>((resolve) => setImmediate(resolve));
    const ms = Math.round((worked * (1 - SCAN_SHARE)) / SCAN_SHARE);
    return new Promise<void>((resolve) => this.#clock.setTimeout(resolve, ms));
  }
}
