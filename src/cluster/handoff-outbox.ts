import { join } from 'node:path';
import type { Clock } from '../config/clock.js';
import type { Layout } from '../store/layout.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import { HANDOFF_VERSION, handoffName, type HandoffFile, type HandoffLink } from './handoff-file.js';

/** Who owns a host, by this node's current view of the live nodes. */
export interface OwnerView {
  hostOwner(hostDir: string): string;
}

export interface OutboxOptions {
  readonly layout: Layout;
  readonly nodeId: string;
  readonly fsync: boolean;
  readonly clock: Clock;
  readonly owners: OwnerView;
  /** Links buffered for one owner before its batch is written at once. */
  readonly maxBatch?: number;
}

/** A batch of links for one owner, by host, with the URLs it holds (a URL goes in once). */
interface Batch {
  readonly links: Map<string, HandoffLink[]>;
  readonly urls: Set<string>;
  /** Hosts lent to the owner, and the writer's record counter that says so. */
  lent?: { counter: number; hosts: Set<string> };
}

/** Links in one owner's batch that make it be written at once. */
const MAX_BATCH = 1000;

/** URLs remembered as sent, so that the links every page repeats are not sent again and again. */
const RECENT_MAX = 100_000;

/**
 * The sending half of hand-offs (docs/protocol.md, "Hand-offs"): links found on this node's
 * pages for hosts other nodes own are buffered per owner and written, batched, as one file per
 * owner into `handoff/<owner>/` (temp + rename). The node calls `flush()` once a link has
 * waited a second (`due`), when a batch is large, and always before it says it is idle, so that at the end of a
 * crawl (every node idle) every link found is in a file its owner will read.
 *
 * A failed write keeps the batch (the next flush tries again) and throws, so that the node's
 * mount-fault handling sees it.
 */
export class HandoffOutbox {
  readonly #o: OutboxOptions;
  readonly #batches = new Map<string, Batch>();
  readonly #recent = new Set<string>();
  readonly #dirsMade = new Set<string>();
  #seq = 0;
  #pending = 0;
  /** Monotonic time the oldest link waiting was added (undefined: none waits). */
  #oldestAt: number | undefined;
  #flushing: Promise<number> | undefined;
  /** Hand-off files written, links sent. */
  written = 0;
  sent = 0;

  constructor(options: OutboxOptions) {
    this.#o = options;
  }

  /** Links waiting to be written. */
  get pending(): number {
    return this.#pending;
  }

  /** True while some batch (links, or a lend) waits to be written or is being written. */
  get waiting(): boolean {
    return this.#batches.size > 0 || this.#flushing !== undefined;
  }

  /** The owners that batches wait for. */
  owners(): IterableIterator<string> {
    return this.#batches.keys();
  }

  /** True when a link has waited `ageMs` or more: time to write the batches. */
  due(ageMs: number): boolean {
    return this.#oldestAt !== undefined && this.#o.clock.monotonic() - this.#oldestAt >= ageMs;
  }

  /** Queues a link of a host another node owns (a link this node owns by its view is ignored: it is the caller's). */
  add(url: string, hostDir: string, depth: number, referrer?: string): void {
    if (this.#recent.has(url)) return;
    this.forward(url, hostDir, depth, referrer);
  }

  /**
   * Queues a link that came to this node for a host it does not own, even if this node sent
   * it out before: two nodes whose views of a host's owner differ for a moment send it back
   * and forth until their views agree, and a link skipped as "sent recently" on its way back
   * would be lost.
   */
  forward(url: string, hostDir: string, depth: number, referrer?: string): void {
    const owner = this.#o.owners.hostOwner(hostDir);
    if (owner === this.#o.nodeId) return;
    if (this.#addTo(owner, url, hostDir, depth, referrer) >= (this.#o.maxBatch ?? MAX_BATCH)) void this.flush().catch(() => undefined);
  }

  /**
   * This node lent a host to `borrower` (docs/protocol.md, "Lending hosts"); its records
   * from `counter` on say so. The host's queued URLs follow with `forward`; the next file to the
   * borrower names the host, so that it takes them even before it reads such a record.
   */
  lend(borrower: string, hostDir: string, counter: number): void {
    const b = this.#batch(borrower);
    b.lent ??= { counter, hosts: new Set() };
    b.lent.counter = Math.max(b.lent.counter, counter);
    b.lent.hosts.add(hostDir);
    this.#oldestAt ??= this.#o.clock.monotonic();
  }

  /** The live set changed: a URL sent to its old owner may have to go to the new one. */
  viewChanged(): void {
    this.#recent.clear();
  }

  /**
   * Writes every batch now; resolves with the number of files written. Flushes run one at a
   * time: a call while one runs waits for it, then writes what came meanwhile.
   */
  async flush(): Promise<number> {
    while (this.#flushing !== undefined) await this.#flushing.catch(() => undefined);
    if (this.#batches.size === 0) return 0;
    this.#flushing = this.#writeAll();
    try {
      return await this.#flushing;
    } finally {
      this.#flushing = undefined;
    }
  }

  async #writeAll(): Promise<number> {
    const batches = [...this.#batches];
    this.#batches.clear();
    this.#pending = 0;
    this.#oldestAt = undefined;
    let files = 0;
    let failure: unknown;
    await Promise.all(
      batches.map(async ([owner, batch]) => {
        try {
          await this.#write(owner, batch);
          files++;
          this.sent += batch.urls.size;
          if (this.#recent.size + batch.urls.size > RECENT_MAX) this.#recent.clear();
          for (const url of batch.urls) this.#recent.add(url);
        } catch (err) {
          failure ??= err;
          this.#keep(owner, batch);
        }
      }),
    );
    this.written += files;
    if (failure !== undefined) throw failure;
    return files;
  }

  /** Puts a batch that could not be written back, merged with what came meanwhile. */
  #keep(owner: string, batch: Batch): void {
    for (const [hostDir, list] of batch.links) for (const [url, depth, referrer] of list) this.#addTo(owner, url, hostDir, depth, referrer);
    if (batch.lent !== undefined) for (const h of batch.lent.hosts) this.lend(owner, h, batch.lent.counter);
  }

  #batch(owner: string): Batch {
    let b = this.#batches.get(owner);
    if (b === undefined) this.#batches.set(owner, (b = { links: new Map(), urls: new Set() }));
    return b;
  }

  /** Adds a link to an owner's batch (once); returns the batch's size. */
  #addTo(owner: string, url: string, hostDir: string, depth: number, referrer?: string): number {
    const b = this.#batch(owner);
    if (b.urls.has(url)) return b.urls.size;
    b.urls.add(url);
    let list = b.links.get(hostDir);
    if (list === undefined) b.links.set(hostDir, (list = []));
    list.push(referrer === undefined ? [url, depth] : [url, depth, referrer]);
    this.#pending++;
    this.#oldestAt ??= this.#o.clock.monotonic();
    return b.urls.size;
  }

  async #write(owner: string, batch: Batch): Promise<void> {
    const file: HandoffFile = {
      v: HANDOFF_VERSION,
      from: this.#o.nodeId,
      to: owner,
      at: this.#o.clock.now(),
      links: Object.fromEntries(batch.links),
      ...(batch.lent && { lent: { counter: batch.lent.counter, hosts: [...batch.lent.hosts] } }),
    };
    const dir = this.#o.layout.inbox(owner);
    const path = join(dir, handoffName(this.#o.nodeId, this.#o.layout.mount.tag, this.#seq++));
    const data = JSON.stringify(file);
    const options = { nodeId: this.#o.nodeId, fsync: this.#o.fsync };
    const { mount } = this.#o.layout;
    if (!this.#dirsMade.has(owner)) {
      // Not recursive: handoff/ exists in every data directory; a vanished mount must fail here.
      await mount.fs.mkdir(dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      this.#dirsMade.add(owner);
    }
    try {
      await writeFileAtomic(mount, path, data, options);
    } catch (err) {
      // The owner's inbox was removed (it was judged dead and drained): make it again, once.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await mount.fs.mkdir(dir).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e;
      });
      await writeFileAtomic(mount, path, data, options);
    }
  }
}
