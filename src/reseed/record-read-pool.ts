import { Worker } from 'node:worker_threads';

/** What a worker is asked: the records `keys` of one links/<host> directory. */
export interface BatchRequest {
  readonly id: number;
  /** The directory's path. */
  readonly dir: string;
  readonly keys: readonly string[];
}

/** One record as a worker read it. */
export type RecordResult =
  /** `links`: those the worker had not sent before in this scan at `depth` or lower. */
  | { readonly outcome: 'ok'; readonly depth: number; readonly links: readonly string[]; readonly url: string }
  /** Gone, or not a record even after rereads: nothing to take from it. */
  | { readonly outcome: 'skip' }
  /** Anything else: the mount failing. */
  | { readonly outcome: 'error'; readonly code?: string | undefined; readonly message: string };

export interface BatchResult {
  readonly id: number;
  readonly results: readonly RecordResult[];
}

/** Worker threads of a pool. Each has one synchronous read at a time in flight. */
export const READ_WORKERS = 4;
/** Batches in flight per worker: one being read, one waiting. */
const BATCHES_PER_WORKER = 2;

/**
 * Worker threads that read and parse links records for one reseed scan (the first scan of a
 * big links/ tree: a million records). A batch holds records of one host directory, and a
 * host's batches always go to the same worker, so the worker's memory of links sent (most
 * links of a host's records are to the same host) removes most repeats before they cross
 * threads. Closed at the end of the scan.
 */
export class RecordReadPool {
  readonly #workers: Worker[] = [];
  readonly #pending = new Map<number, { resolve: (r: BatchResult) => void; reject: (e: unknown) => void }>();
  readonly #inFlight: number[];
  /** The worker each directory being scanned uses, and how many directories each has. */
  readonly #hostSlots = new Map<string, number>();
  readonly #hostsOf: number[];
  #nextId = 0;
  #failure: unknown;

  constructor(size = READ_WORKERS) {
    this.#inFlight = new Array<number>(size).fill(0);
    this.#hostsOf = new Array<number>(size).fill(0);
    for (let i = 0; i < size; i++) {
      // '../reseed/': the same file from dist/src/reseed and from the bundle in dist/src/cli.
      const w = new Worker(new URL('../reseed/record-read-worker.js', import.meta.url));
      w.on('message', (r: BatchResult) => {
        const p = this.#pending.get(r.id);
        this.#pending.delete(r.id);
        this.#inFlight[i]!--;
        p?.resolve(r);
      });
      w.on('error', (err) => this.#fail(err));
      w.on('exit', (code) => {
        if (code !== 0) this.#fail(new Error(`record reader exited with ${code}`));
      });
      this.#workers.push(w);
    }
  }

  #fail(err: unknown): void {
    this.#failure ??= err;
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }

  /** True when the worker for `hostDir` can take another batch now. */
  hasRoom(hostDir: string): boolean {
    return this.#inFlight[this.#slot(hostDir)]! < BATCHES_PER_WORKER;
  }

  /**
   * The worker of `hostDir`: the one it has, or the one with the fewest directories now (a
   * scan lists a few directories at once, and each should have a thread of its own).
   */
  #slot(hostDir: string): number {
    let slot = this.#hostSlots.get(hostDir);
    if (slot === undefined) {
      slot = 0;
      for (let i = 1; i < this.#hostsOf.length; i++) if (this.#hostsOf[i]! < this.#hostsOf[slot]!) slot = i;
      this.#hostsOf[slot]!++;
      this.#hostSlots.set(hostDir, slot);
    }
    return slot;
  }

  /** The scan is done with `hostDir`: its batches sent, its worker free for another directory. */
  release(hostDir: string): void {
    const slot = this.#hostSlots.get(hostDir);
    if (slot === undefined) return;
    this.#hostSlots.delete(hostDir);
    this.#hostsOf[slot]!--;
  }

  /** Reads the records `keys` of the directory `dir` (that of `hostDir`). */
  read(hostDir: string, dir: string, keys: readonly string[]): Promise<BatchResult> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const slot = this.#slot(hostDir);
    const id = this.#nextId++;
    this.#inFlight[slot]!++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      const req: BatchRequest = { id, dir, keys };
      this.#workers[slot]!.postMessage(req);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
