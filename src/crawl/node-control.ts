import { FatalError } from '../errors.js';
import { type ControlRecord, type Order, orderFor, readControl } from '../cluster/control-file.js';
import type { LiveSettings } from '../config/live-settings.js';
import { readSettings } from '../config/settings-file.js';
import type { Logger } from '../progress/logger.js';
import type { Mount } from '../store/mount.js';

/** What a node does when the control file asks (CrawlNode). */
export interface ControlEvents {
  /** `stop` or `drain NODE` was given for this node: it stops as on Ctrl-C, and exits 0 (`message`: why, for its log). */
  stop(message: string): void;
  /** Paused or resumed: the loop and the request runner look again. */
  changed(): void;
}

/**
 * A node's reading of the control file (docs/operations.md, "Stopping, pausing, draining";
 * docs/protocol.md, "The control file"): once as it starts, before its first record, then at
 * every heartbeat (one small read). It remembers the file's `seq` it read first (or the one its
 * supervisor read, `since`), so that a stop or a drain given before it started is not for it,
 * while a pause in force is: a node started while the crawl is paused starts paused. With
 * `live`, each look also reads the crawl's settings file and applies a new revision
 * (docs/operations.md, "Changing a setting").
 */
export class NodeControl {
  readonly #mount: Mount;
  readonly #config: { readonly dataDir: string; readonly nodeId: string; readonly controlSince?: number };
  readonly #log: Logger;
  readonly #events: ControlEvents;
  readonly #live: LiveSettings | undefined;
  #since: number | undefined;
  #order: Order = 'run';

  constructor(
    deps: {
      readonly mount: Mount;
      readonly config: { readonly dataDir: string; readonly nodeId: string; readonly controlSince?: number };
      readonly log: Logger;
      readonly live?: LiveSettings | undefined;
    },
    events: ControlEvents,
  ) {
    this.#mount = deps.mount;
    this.#config = deps.config;
    this.#log = deps.log;
    this.#live = deps.live;
    this.#events = events;
  }

  /** True while the crawl is paused: no request starts. */
  get paused(): boolean {
    return this.#order === 'pause';
  }

  /** True once a drain of this node was read. */
  get draining(): boolean {
    return this.#order === 'drain';
  }

  /** As the node starts (again after a fault of the mount: only the first read sets `since`). */
  async begin(): Promise<void> {
    const read = await readControl(this.#mount, this.#config.dataDir);
    const record = typeof read === 'object' ? read : undefined;
    this.#since ??= this.#config.controlSince ?? record?.seq ?? 0;
    this.#apply(record);
  }

  /** At every heartbeat: true when the node was told to change. A file that does not parse changes nothing; a failing mount throws. */
  async look(): Promise<boolean> {
    if (this.#since === undefined) return false;
    const read = await readControl(this.#mount, this.#config.dataDir);
    const changed = read !== 'torn' && this.#apply(read === 'absent' ? undefined : read);
    if (this.#live !== undefined) await this.#lookAtSettings(this.#live);
    return changed;
  }

  /** A new revision of the settings applied, each change logged; a file that does not parse is read again at the next look. */
  async #lookAtSettings(live: LiveSettings): Promise<void> {
    const record = await readSettings(this.#config.dataDir, this.#mount).catch((err: unknown) => {
      if (err instanceof FatalError) return undefined; // torn: a writer's rename is on its way
      throw err;
    });
    if (record !== undefined) for (const line of live.apply(record)) this.#log.info(`settings revision ${record.revision}: ${line}`);
  }

  #apply(record: ControlRecord | undefined): boolean {
    const order = orderFor(record, this.#config.nodeId, this.#since ?? 0);
    if (order === this.#order || this.#order === 'stop' || this.#order === 'drain') return false;
    const was = this.#order;
    this.#order = order;
    if (order === 'pause') {
      const p = record!.paused!;
      this.#log.warn(`the crawl is paused (by ${p.by} at ${p.at}): no request until mountcrawl resume`);
    } else if (order === 'run') {
      if (was === 'pause') this.#log.warn('the crawl is resumed');
    } else if (order === 'drain') {
      const d = record!.drain.find((e) => e.node === this.#config.nodeId)!;
      this.#log.warn(`drained (by ${d.by} at ${d.at}): stopping after the requests in flight; the other nodes take its hosts`);
      this.#events.stop(`drained (by ${d.by} at ${d.at}): its hosts went to the other nodes`);
      return true;
    } else {
      const s = record!.stop!;
      this.#log.warn(`mountcrawl stop (by ${s.by} at ${s.at}): stopping after the requests in flight`);
      this.#events.stop(`stopped by mountcrawl stop (by ${s.by} at ${s.at})`);
      return true;
    }
    this.#events.changed();
    return true;
  }
}
