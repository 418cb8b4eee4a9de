import { join } from 'node:path';
import { type Layout } from '../store/layout.js';
import { tempOwner } from '../store/temp-names.js';
import { readRecord } from '../store/read-record.js';
import type { OfferResult } from '../frontier/admission/admission.js';
import { mapLimit } from '../util/map-limit.js';
import { asHandoff, isHandoffName } from './handoff-file.js';
import type { Referrer } from '../store/records.js';

/** Where the links of a hand-off go. */
export interface InboxSink {
  /** In scope at all (a link out of scope is dropped, as a reseed would). */
  inScope(hostDir: string): boolean;
  /** This node crawls the host (by its current view of the live nodes). */
  owns(hostDir: string): boolean;
  /** Offers a link of an owned host to the frontier (the --hook priority may make the answer wait). */
  offer(url: string, hostDir: string, depth: number, referrer?: Referrer): OfferResult | Promise<OfferResult>;
  /** A link of a host this node does not own (any more): sent on to its owner (with the URL of the page it was found on, if known). */
  forward(url: string, hostDir: string, depth: number, referrer?: string): void;
  /**
   * Writes what `forward` took, into its owners' inboxes; called before the files it came
   * from are removed, so that a link is always in some file on the mount. Throws when the
   * mount refuses (the files stay).
   */
  sent?(): Promise<unknown>;
  /** `lender` lent these hosts to this node, as its record `counter` says (docs/protocol.md, "Lending hosts"). */
  lent?(lender: string, counter: number, hostDirs: readonly string[]): void;
}

/** What one read of the inbox did. */
export interface InboxStats {
  files: number;
  queued: number;
  forwarded: number;
  /** Files kept for the next read because the frontier was full. */
  kept: number;
}

/** How an inbox is read. */
export interface InboxRead {
  /** Temporary files of writers not in this set (killed mid-write: no one will rename them) are removed too. */
  readonly sweepTempsOf?: ReadonlySet<string>;
  /** Listed from the server, not from the mount's cache (a reseed that may end the crawl). */
  readonly fresh?: boolean;
}

/** Hand-off files read in parallel (each is a round trip on a network mount). */
const READ_PARALLELISM = 16;

/**
 * The receiving half of hand-offs (docs/protocol.md, "Hand-offs"): lists `handoff/<node>/`,
 * offers each file's links of hosts this node owns to its frontier, sends on the links of
 * hosts it does not own (ownership moved while the file was unread, or its writer's view of
 * the live nodes was not this one's), and removes the file, only once every link in it is
 * queued, known or sent on. A file whose links did not all fit in the frontier stays and is
 * read again. Nothing here depends on who wrote a file, whether its writer still lives, or
 * on any clock.
 */
export class HandoffInbox {
  readonly #layout: Layout;
  readonly #nodeId: string;

  constructor(layout: Layout, nodeId: string) {
    this.#layout = layout;
    this.#nodeId = nodeId;
  }

  /** Reads this node's inbox. */
  read(sink: InboxSink, how: InboxRead = {}): Promise<InboxStats> {
    return this.#drain(this.#layout.inbox(this.#nodeId), sink, false, how);
  }

  /**
   * Makes the next listing of `dir` come from the server, not from the mount's cache: a client's
   * own change to a directory drops what it cached of it, so one small temporary file is created
   * there and removed (docs/protocol.md, "Hand-offs"). False when `dir` does not exist.
   */
  async #freshen(dir: string): Promise<boolean> {
    const { mount } = this.#layout;
    const probe = mount.nextTempPath(join(dir, 'fresh'), this.#nodeId);
    try {
      await mount.fs.writeNew(probe, '');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return false;
      if (code !== 'EEXIST') mount.temps.remember(probe); // made, perhaps: removed once the mount is back
      throw err;
    }
    await mount.temps.remove(probe); // when the mount refuses, removed once it is back
    return true;
  }

  /** True when this node's inbox holds a hand-off (one listing; false when it cannot be listed). */
  async hasFiles(): Promise<boolean> {
    const names = await this.#layout.fs.readdir(this.#layout.inbox(this.#nodeId)).catch(() => [] as string[]);
    return names.some(isHandoffName);
  }

  /**
   * Removes this node's inbox directory if it is empty, as the node leaves: nobody else
   * would (an orphaned inbox goes once a reader empties it). A writer that sends to this node
   * later makes it again. Never throws.
   */
  async removeOwn(): Promise<void> {
    await this.#layout.fs.rmdir(this.#layout.inbox(this.#nodeId)).catch(() => undefined);
  }

  /**
   * Reads the inboxes of nodes not in `live` (dead, gone for good, or ended done), so that what
   * was sent to them reaches the hosts' new owners, and removes the emptied directories. Called
   * at every reseed: a writer whose view still counted such a node alive may send to it after
   * the reseed that followed its leaving. `sweepTemps` (after a node left) also removes the
   * temporary files of writers not in `live`; otherwise they are left to the age sweep, so that
   * a writer that joined a moment ago, not yet in this node's view, keeps its file.
   */
  async readOrphans(live: ReadonlySet<string>, sink: InboxSink, how: { sweepTemps: boolean; fresh?: boolean }): Promise<InboxStats> {
    const fresh = how.fresh === true;
    const total: InboxStats = { files: 0, queued: 0, forwarded: 0, kept: 0 };
    let names: string[];
    try {
      if (fresh) await this.#freshen(this.#layout.dir('handoff'));
      names = await this.#layout.fs.readdir(this.#layout.dir('handoff'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return total;
      throw err;
    }
    for (const name of names) {
      if (name.startsWith('.') || live.has(name)) continue;
      const s = await this.#drain(join(this.#layout.dir('handoff'), name), sink, true, {
        ...(how.sweepTemps ? { sweepTempsOf: live } : {}),
        fresh,
      });
      total.files += s.files;
      total.queued += s.queued;
      total.forwarded += s.forwarded;
      total.kept += s.kept;
    }
    return total;
  }

  async #drain(dir: string, sink: InboxSink, removeDir: boolean, how: InboxRead): Promise<InboxStats> {
    const stats: InboxStats = { files: 0, queued: 0, forwarded: 0, kept: 0 };
    let names: string[];
    try {
      if (how.fresh === true && !(await this.#freshen(dir))) return stats;
      names = await this.#layout.fs.readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return stats;
      throw err;
    }
    const live = how.sweepTempsOf;
    if (live !== undefined) {
      for (const name of names) {
        const writer = tempOwner(name);
        if (writer !== undefined && !live.has(writer)) await this.#layout.fs.unlink(join(dir, name)).catch(() => undefined);
      }
    }
    const files = names.filter(isHandoffName);
    const done: string[] = [];
    await mapLimit(files, READ_PARALLELISM, async (name) => {
      const path = join(dir, name);
      const read = await readRecord(this.#layout.mount, path, asHandoff);
      if (read.kind === 'absent') return; // another reader of an orphaned inbox took it
      const file = read.kind === 'value' ? read.value : undefined; // torn: nothing to take from it
      stats.files++;
      // Lends count before the links are sorted: the lent hosts' URLs are this node's now.
      if (file?.lent !== undefined && file.to === this.#nodeId && !removeDir) sink.lent?.(file.from, file.lent.counter, file.lent.hosts);
      let complete = true;
      for (const [hostDir, list] of Object.entries(file?.links ?? {})) {
        if (!sink.inScope(hostDir)) continue;
        const owned = sink.owns(hostDir);
        for (const [url, depth, from] of list) {
          if (!owned) {
            sink.forward(url, hostDir, depth, from);
            stats.forwarded++;
            continue;
          }
          // The page it was found on is a level above it (docs/protocol.md, errs records).
          const offered = sink.offer(url, hostDir, depth, from === undefined ? undefined : { url: from, depth: depth - 1 });
          const r = typeof offered === 'string' ? offered : await offered;
          if (r === 'queued') stats.queued++;
          else if (r === 'full') complete = false;
        }
      }
      if (!complete) {
        stats.kept++;
        return;
      }
      done.push(path);
    });
    // The links sent on are written before the files they came from go (docs/protocol.md,
    // "Hand-offs"): a peer that reads this inbox, or the owner's, as its last look before it
    // ends must find them in one or the other, not in this node's memory.
    if (stats.forwarded > 0) await sink.sent?.();
    await mapLimit(done, READ_PARALLELISM, (path) =>
      this.#layout.fs.unlink(path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      }),
    );
    // An orphaned inbox that is empty now goes (a late writer recreates it, and it is read again).
    if (removeDir && stats.kept === 0) await this.#layout.fs.rmdir(dir).catch(() => undefined);
    return stats;
  }
}
