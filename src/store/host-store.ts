import { dirname } from 'node:path';
import { isKey } from '../url/key.js';
import { mapLimit } from '../util/map-limit.js';
import { writeFileAtomic, writeFilesAtomic } from './atomic-write.js';
import type { DirHandles } from './dir-handles.js';
import { Layout, type HostKind } from './layout.js';
import { tempOwner } from './temp-names.js';
import { readRecord } from './read-record.js';
import { readSummaryPages } from './summary-pages.js';
import { asErrsRecord, serializeRecord, type ErrsRecord, type LinksRecord } from './records.js';
import type { WriteThread } from './write-thread.js';

/** Reads in flight at once when a host's errs records are loaded. */
const READ_PARALLELISM = 16;

/** What is on the mount for one host, read once when a node takes the host. */
export interface HostListing {
  /** Keys that have a links record: done. */
  readonly linksKeys: Set<string>;
  /** The errs records of the host, by key. */
  readonly errs: Map<string, ErrsRecord>;
  /** Temporary files removed because their writer is gone. */
  readonly removedTemps: number;
}

/**
 * Reads and writes one host's files: html/<host>/, links/<host>/, errs/<host>/ (docs/protocol.md, "What is on the mount").
 * Every write is atomic (temp file, then rename), and a page's links record is written
 * after its html file (invariant 2), so a key is done exactly when its links record exists.
 */
export class HostStore {
  readonly #layout: Layout;
  readonly #nodeId: string;
  readonly #fsync: boolean;
  readonly #madeDirs = new Set<string>();
  /** On a network mount: the host directories, open, so that a write costs fewer round trips. */
  readonly #dirs: DirHandles | undefined;
  /** On a local disk: the thread that makes the writes (WriteThread). */
  readonly #thread: WriteThread | undefined;

  constructor(
    layout: Layout,
    options: { nodeId: string; fsync: boolean; dirs?: DirHandles | undefined; thread?: WriteThread | undefined },
  ) {
    this.#layout = layout;
    this.#nodeId = options.nodeId;
    this.#fsync = options.fsync;
    this.#dirs = options.dirs;
    this.#thread = options.thread;
  }

  get layout(): Layout {
    return this.#layout;
  }

  /**
   * Makes html|links|errs/<host>. Never recursive: if the top-level directory is gone (the
   * mount dropped and left an empty local directory), this fails instead of quietly building
   * a new tree where the mount was.
   */
  async #ensureDir(kind: HostKind, hostDir: string): Promise<void> {
    const id = `${kind}/${hostDir}`;
    if (this.#madeDirs.has(id)) return;
    await this.#layout.fs.mkdir(this.#layout.hostDir(kind, hostDir)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    this.#madeDirs.add(id);
  }

  /** Writes atomically; a host directory removed behind our back is made again, once. */
  async #write(kind: HostKind, hostDir: string, path: string, data: string | Uint8Array): Promise<void> {
    await this.#ensureDir(kind, hostDir);
    try {
      await this.#writeAtomic(path, data);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.#madeDirs.delete(`${kind}/${hostDir}`);
      await this.#ensureDir(kind, hostDir);
      await this.#writeAtomic(path, data);
    }
  }

  /** One atomic write, through the open host directory when there is one (DirHandles). */
  #writeAtomic(path: string, data: string | Uint8Array): Promise<void> {
    const options = { nodeId: this.#nodeId, fsync: this.#fsync, thread: this.#thread };
    const dirs = this.#dirs;
    const mount = this.#layout.mount;
    if (dirs === undefined) return writeFileAtomic(mount, path, data, options);
    const dir = dirname(path); // `via` stands for the file's own directory
    return dirs
      .use(dir, (via) => writeFileAtomic(mount, path, data, via === undefined ? options : { ...options, via }))
      .catch((err: unknown) => {
        // The directory may be gone or its handle stale (ENOENT, ESTALE): the next write opens it again.
        dirs.drop(dir);
        throw err;
      });
  }

  /** Starts the write thread, when there is one, before the first write (WriteThread.start). */
  startWriteThread(): void {
    this.#thread?.start();
  }

  /** Closes the open host directories and the write thread (the node is ending); later writes go by path and the pool. */
  close(): void {
    this.#dirs?.close();
    this.#thread?.close();
  }

  /** Stores a fetched page: the body (when there is one), then its links record. */
  async writePage(hostDir: string, key: string, body: Uint8Array | null, record: LinksRecord): Promise<void> {
    const links = { path: this.#layout.links(hostDir, key), data: serializeRecord(record) };
    if (body !== null) {
      const html = { path: this.#layout.html(hostDir, key), data: body };
      if (this.#inOneMessage(hostDir)) return this.#writeBoth(hostDir, html, links);
      await this.#write('html', hostDir, html.path, html.data);
    }
    await this.#write('links', hostDir, links.path, links.data);
  }

  /**
   * True when a page's two files are written together (writeFilesAtomic: in one message when
   * there is a write thread): not through open directories (DirHandles, one per directory),
   * and once the host's directories were made (a host's first page makes them one after the
   * other, the links one only once the html file is written).
   */
  #inOneMessage(hostDir: string): boolean {
    return this.#dirs === undefined && this.#madeDirs.has(`html/${hostDir}`) && this.#madeDirs.has(`links/${hostDir}`);
  }

  async #writeBoth(hostDir: string, html: { path: string; data: Uint8Array }, links: { path: string; data: string }): Promise<void> {
    try {
      await writeFilesAtomic(this.#layout.mount, [html, links], { nodeId: this.#nodeId, fsync: this.#fsync, thread: this.#thread });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // A host directory removed behind our back: the two writes again, each as #write makes
      // it (its directory made again). An html file already written is replaced by the same bytes.
      await this.#write('html', hostDir, html.path, html.data);
      await this.#write('links', hostDir, links.path, links.data);
    }
  }

  /** Stores the body of a non-HTML response kept with --keep (before its links record). */
  async writeFile(hostDir: string, key: string, ext: string, body: Uint8Array): Promise<void> {
    await this.#write('files', hostDir, this.#layout.file(hostDir, key, ext), body);
  }

  /** Writes (or replaces) the errs record of a key. */
  async writeErrs(hostDir: string, key: string, record: ErrsRecord): Promise<void> {
    await this.#write('errs', hostDir, this.#layout.errs(hostDir, key), serializeRecord(record));
  }

  /**
   * True when a key has a links record: one stat on the mount. Only for `--partition url`,
   * where other nodes write into the same host directories and memory cannot know.
   */
  async hasLinks(hostDir: string, key: string): Promise<boolean> {
    try {
      await this.#layout.fs.stat(this.#layout.links(hostDir, key));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  /** Removes the errs record of a key that has now succeeded. */
  async removeErrs(hostDir: string, key: string): Promise<void> {
    await this.#layout.fs.unlink(this.#layout.errs(hostDir, key)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /**
   * Checks that the mount takes a write again: a 64 KiB file (a page-sized write, so a disk
   * that has only a few bytes left still fails), then removed. Under a temporary name of this
   * node: left by a node killed between the two, it goes with the node's other temporary
   * files (docs/protocol.md, invariant 4; simulator seed 2583 left a finished probe file).
   */
  async probe(): Promise<void> {
    const { mount } = this.#layout;
    const path = mount.nextTempPath(`${this.#layout.dir('nodes')}/.probe`, this.#nodeId);
    await mount.fs.writeNew(path, Buffer.alloc(64 * 1024, 0x20)).catch(async (err: unknown) => {
      await mount.temps.remove(path); // a failed write may have left part of it
      throw err;
    });
    await mount.fs.unlink(path);
  }

  /**
   * Lists a host's directories once (no stat per URL): the keys with links records, the errs
   * records, and removes temporary files whose writer `isGone` says is dead or is a previous
   * incarnation (docs/protocol.md, invariant 4). Missing directories are an empty host.
   * `withSummary`: the pages the host's summary names count as keys with links records.
   */
  async listHost(hostDir: string, isGone: (nodeId: string) => boolean, withSummary = false): Promise<HostListing> {
    const [[html, links, errs], summary] = await Promise.all([
      Promise.all((['html', 'links', 'errs'] as const).map((kind) => this.#list(kind, hostDir))),
      withSummary ? readSummaryPages(this.#layout, hostDir) : undefined,
    ]);
    let removedTemps = 0;
    // The pages of the host's summary are done too: a listing may lag a hand-over by the mount's
    // cache time, and the previous holder wrote the summary before it released the lease, read
    // now, after this node took it (docs/protocol.md, "Host summaries"); only its pages are
    // read, not its links (most of its bytes), which the reseed reads.
    const linksKeys = new Set<string>(summary?.map(([key]) => key));
    const errKeys: string[] = [];
    const removals: Promise<void>[] = [];
    for (const [kind, names, into] of [
      ['html', html!, undefined],
      ['links', links!, linksKeys],
      ['errs', errs!, errKeys],
    ] as const) {
      for (const name of names) {
        const owner = tempOwner(name);
        if (owner !== undefined) {
          if (isGone(owner)) {
            removedTemps++;
            removals.push(this.#layout.fs.unlink(`${this.#layout.hostDir(kind, hostDir)}/${name}`).catch(() => undefined));
          }
          continue;
        }
        if (into === undefined || !name.endsWith('.json')) continue;
        const key = name.slice(0, -5);
        if (!isKey(key)) continue;
        if (into instanceof Set) into.add(key);
        else into.push(key);
      }
    }
    await Promise.all(removals);
    const errsMap = new Map<string, ErrsRecord>();
    await mapLimit(errKeys, READ_PARALLELISM, async (key) => {
      // An absent or torn errs record is a URL that is simply not done.
      const read = await readRecord(this.#layout.mount, this.#layout.errs(hostDir, key), asErrsRecord);
      if (read.kind === 'value') errsMap.set(key, read.value);
    });
    return { linksKeys, errs: errsMap, removedTemps };
  }

  async #list(kind: HostKind, hostDir: string): Promise<string[]> {
    try {
      return await this.#layout.fs.readdir(this.#layout.hostDir(kind, hostDir));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}
