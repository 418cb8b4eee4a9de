import type { Clock } from '../config/clock.js';
import { describeError, mountFaultCode } from '../errors.js';
import type { Logger } from '../progress/logger.js';
import { readMarker, type Marker } from '../store/data-dir.js';
import { MARKER_FILE, type Layout } from '../store/layout.js';

/** A failure of the data directory as a whole. */
export interface Fault {
  readonly code: string;
  readonly message: string;
}

/**
 * Tells failures of the mount (full, read-only, I/O errors, gone) from bugs, and keeps the
 * state of a fault (issue: the node stops fetching, says one line, retries the mount for
 * --mount-retry seconds, then gives up). The clock of a fault starts at its first failure and
 * is reset only by a page that is stored again, so a disk that takes a small probe but not a
 * page still runs out of time.
 */
export class MountGuard {
  #fault: Fault | undefined;
  #firstAt: number | undefined;

  constructor(
    private readonly deps: {
      readonly dataDir: string;
      readonly retryMs: number;
      readonly clock: Clock;
      readonly log: Logger;
      readonly layout: Layout;
      readonly marker: Marker;
    },
  ) {}

  get fault(): Fault | undefined {
    return this.#fault;
  }

  /**
   * Classifies a failed operation: a fault of the mount (now the current fault, announced
   * once) or `undefined` for anything else (a bug). ENOENT or ENOTDIR on one of our own
   * directories counts as the mount: the directory was removed or the mount went away (the
   * marker check of `probe` tells which).
   */
  classify(err: unknown): Fault | undefined {
    const errno = (err as NodeJS.ErrnoException).code;
    let code = errno === 'EMOUNTLOST' ? 'MOUNT_LOST' : mountFaultCode(err);
    if (code === undefined && (errno === 'ENOENT' || errno === 'ENOTDIR')) code = 'MOUNT_LOST';
    if (code === undefined) return undefined;
    if (this.#fault === undefined) {
      const { clock, dataDir, retryMs, log } = this.deps;
      this.#fault = { code, message: `${dataDir}: ${describeError(err)}` };
      this.#firstAt ??= clock.monotonic();
      const left = Math.max(0, retryMs - (clock.monotonic() - this.#firstAt)) / 1000;
      log.error(`${code}: ${this.#fault.message}; fetching paused, retrying the mount for ${Math.round(left)} s`);
    }
    return this.#fault;
  }

  /** True once the current fault has lasted longer than --mount-retry. */
  expired(): boolean {
    return this.#fault !== undefined && this.deps.clock.monotonic() - (this.#firstAt ?? 0) > this.deps.retryMs;
  }

  /** The mount answered the probe: fetching goes on. */
  cleared(): void {
    this.#fault = undefined;
    this.deps.log.warn('the mount is back: crawling again');
  }

  /**
   * A page was stored: the mount works. During a fault (a page whose request was in flight
   * when it came, written once the mount answered again) its clock starts again now: cleared,
   * `expired` would have counted it from the clock's origin and given up at once.
   */
  stored(): void {
    this.#firstAt = this.#fault === undefined ? undefined : this.deps.clock.monotonic();
  }

  /** Throws EMOUNTLOST when the data directory's marker is gone or is another directory's. */
  async checkMarker(): Promise<void> {
    const marker = await readMarker(this.deps.layout);
    if (marker === undefined || marker.id !== this.deps.marker.id) {
      const e: NodeJS.ErrnoException = new Error(
        `its marker ${MARKER_FILE} is gone or changed (the mount dropped, or the directory was removed or replaced)`,
      );
      e.code = 'EMOUNTLOST';
      throw e;
    }
  }
}
