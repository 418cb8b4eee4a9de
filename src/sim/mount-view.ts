import { posix } from 'node:path';
import type { MountFs, MountStat } from '../store/mount-fs.js';
import type { Random } from './random.js';
import type { Scheduler } from './scheduler.js';
import { fsError, type MountServer } from './mount-server.js';
import type { Trace } from './trace.js';

/** When the mount fails for a node (chosen by the run's faults: src/sim/faults.ts). */
export interface MountWeather {
  /** True when an operation of `node` reaching the server at `t` fails with EIO. */
  eio(node: string, t: number): boolean;
  /** True when a write at `t` finds the server's disk full. */
  enospc(t: number): boolean;
  /** The time a stall of `node`'s mount that covers `t` ends, undefined when none. */
  stallEnd(node: string, t: number): number | undefined;
}

/** Told of every operation the server made or refused: which process, what, and its error if any. */
export type MountObserver = (process: string, call: string, what: string, error: unknown) => void;

/** How a node's mount behaves. */
export interface MountViewOptions {
  /** The loser of an exclusive create gets EPERM rather than EEXIST, as over sshfs. */
  readonly sshfs: boolean;
  /** How long a listing or an attribute may be served from the node's cache (NFS's actimeo, sshfs's caches). */
  readonly cacheMs: number;
  /** A file replaced while read may come back cut at the new file's size (FUSE: docs/protocol.md). */
  readonly tornReads: boolean;
}

/**
 * One node's view of the simulated mount, the MountFs its code is given (docs/simulator.md).
 * Each operation takes a request's latency to reach the server, where MountServer decides it,
 * and a reply's latency to come back as an event of the node's process: a node killed in
 * between never hears of an operation the server made (a lost reply); a paused node hears
 * when it resumes. Listings and attributes may come from the node's own cache for up to
 * `cacheMs`; the node's own changes clear what they touch, as a real client's do.
 */
export class MountView implements MountFs {
  readonly #server: MountServer;
  readonly #sched: Scheduler;
  readonly #node: string;
  readonly #owner: string;
  readonly #rng: Random;
  readonly #opts: MountViewOptions;
  readonly #weather: MountWeather;
  readonly #trace: Trace;
  readonly #observe: MountObserver | undefined;
  readonly #listings = new Map<string, { names: string[]; at: number }>();
  readonly #attrs = new Map<string, { stat: MountStat; at: number }>();

  constructor(
    env: { server: MountServer; sched: Scheduler; rng: Random; weather: MountWeather; trace: Trace; observe?: MountObserver },
    node: string,
    owner: string,
    opts: MountViewOptions,
  ) {
    this.#server = env.server;
    this.#sched = env.sched;
    this.#rng = env.rng;
    this.#weather = env.weather;
    this.#trace = env.trace;
    this.#observe = env.observe;
    this.#node = node;
    this.#owner = owner;
    this.#opts = opts;
  }

  readFile(path: string): Promise<Buffer> {
    let opened: { data: Buffer; ino: number } | undefined;
    return this.#op('read', path, () => {
      opened = this.#server.readFile(path);
      return opened.data;
    }).then((data) => this.#maybeTorn(path, data, opened!.ino));
  }

  writeNew(path: string, data: string | Uint8Array): Promise<void> {
    const bytes = Buffer.from(data);
    return this.#op('create', path, () => {
      this.#changed(path);
      if (this.#weather.enospc(this.#sched.now)) {
        this.#server.writeNew(path, bytes, this.#rng.int(bytes.length + 1));
        throw fsError('ENOSPC', 'write', path);
      }
      this.#server.writeNew(path, bytes);
    });
  }

  rename(from: string, to: string): Promise<void> {
    return this.#op('rename', `${from} -> ${to}`, () => {
      this.#changed(from);
      this.#changed(to);
      this.#server.rename(from, to);
    });
  }

  link(existing: string, newPath: string): Promise<void> {
    return this.#op('link', `${existing} -> ${newPath}`, () => {
      this.#changed(newPath);
      this.#server.link(existing, newPath, this.#opts.sshfs);
    });
  }

  unlink(path: string): Promise<void> {
    return this.#op('unlink', path, () => {
      this.#changed(path);
      this.#server.unlink(path);
    });
  }

  mkdir(path: string, options?: { readonly recursive?: boolean }): Promise<void> {
    return this.#op('mkdir', path, () => {
      this.#changed(path);
      this.#server.mkdir(path, options?.recursive === true);
    });
  }

  rmdir(path: string): Promise<void> {
    return this.#op('rmdir', path, () => {
      this.#changed(path);
      this.#server.rmdir(path);
    });
  }

  readdir(path: string): Promise<string[]> {
    const cached = this.#listings.get(path);
    if (cached !== undefined && this.#sched.now - cached.at < this.#opts.cacheMs) return this.#local([...cached.names]);
    return this.#op('list', path, () => {
      const names = this.#server.readdir(path);
      if (this.#opts.cacheMs > 0) this.#listings.set(path, { names, at: this.#sched.now });
      return [...names];
    });
  }

  stat(path: string): Promise<MountStat> {
    const cached = this.#attrs.get(path);
    if (cached !== undefined && this.#sched.now - cached.at < this.#opts.cacheMs) return this.#local(cached.stat);
    return this.#op('stat', path, () => {
      const stat = this.#server.stat(path);
      if (this.#opts.cacheMs > 0) this.#attrs.set(path, { stat, at: this.#sched.now });
      return stat;
    });
  }

  /** A node's own change clears its cached listing of the directory and attributes of the name. */
  #changed(path: string): void {
    this.#listings.delete(posix.dirname(path));
    this.#listings.delete(path);
    this.#attrs.delete(path);
    this.#attrs.delete(posix.dirname(path));
  }

  /** FUSE pairs the size of the name's new file with the old file's open handle: the read stops there. */
  #maybeTorn(path: string, data: Buffer, ino: number): Buffer {
    if (!this.#opts.tornReads) return data;
    const now = this.#server.lookup(path);
    if (now === undefined || now.kind !== 'file' || now.ino === ino || !this.#rng.chance(0.5)) return data;
    const size = this.#server.readFile(path).data.length;
    if (size >= data.length) return data;
    this.#trace.note(this.#sched.now, this.#node, `torn read ${path}`);
    return data.subarray(0, size);
  }

  /** An answer from the node's own cache: no round trip, but not in the same turn either. */
  #local<T>(value: T): Promise<T> {
    return new Promise((resolve) => this.#sched.after(0.01, () => resolve(value), this.#owner));
  }

  /** A round trip to the server: stalls wait, EIO may come before or after the server made the change. */
  #op<T>(call: string, what: string, apply: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const send = (): void => {
        const stall = this.#weather.stallEnd(this.#node, this.#sched.now);
        if (stall !== undefined) {
          this.#sched.after(stall - this.#sched.now, send);
          return;
        }
        this.#sched.after(this.#latency(), () => {
          let result: T | undefined;
          let error: unknown;
          const eio = this.#weather.eio(this.#node, this.#sched.now);
          if (eio && this.#rng.chance(0.5)) error = fsError('EIO', call, what);
          else {
            try {
              result = apply();
            } catch (err) {
              error = err;
            }
            if (eio) error = fsError('EIO', call, what);
          }
          this.#trace.op(this.#sched.now, this.#node, call, what, error);
          this.#observe?.(this.#owner, call, what, error);
          this.#sched.after(this.#latency(), () => (error === undefined ? resolve(result as T) : reject(error)), this.#owner);
        });
      };
      send();
    });
  }

  /** One way of a round trip: mostly a fraction of a millisecond, sometimes tens. */
  #latency(): number {
    return this.#rng.chance(0.02) ? this.#rng.between(5, 60) : 0.05 + this.#rng.next() * 0.8;
  }
}
