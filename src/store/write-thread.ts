import { Worker } from 'node:worker_threads';
import { TurnBatch } from '../util/turn-batch.js';
import { fileSystemKind } from './fs-kind.js';

/**
 * One atomic write as the thread is asked it: the temporary file, then the rename to `path`.
 * The bytes are `length` bytes at `start` of the shared ring, or `data` when they did not fit.
 */
export type WriteJob = {
  readonly id: number;
  readonly tmp: string;
  readonly path: string;
  /** Made only if the job of this id, earlier in the same batch, was (WriteThread.writeInOrder). */
  readonly after?: number;
} & ({ readonly start: number; readonly length: number } | { readonly data: Uint8Array });

/** How a write failed: the step and the error's fields (an Error does not cross threads whole). */
export interface WriteFailure {
  /** `skipped`: not tried, because the write it came after was not made (nothing to remove). */
  readonly step: 'open' | 'write' | 'close' | 'rename' | 'skipped';
  readonly message: string;
  readonly code?: string | undefined;
  readonly errno?: number | undefined;
  readonly syscall?: string | undefined;
  readonly path?: string | undefined;
  readonly dest?: string | undefined;
}

export interface WriteResult {
  readonly id: number;
  readonly failure: WriteFailure | undefined;
}

/** The thread's answer to a batch: the results, and the bytes that did not fit the ring, handed back to be freed here. */
export interface WriteAnswer {
  readonly results: readonly WriteResult[];
  readonly bodies: readonly ArrayBuffer[];
}

/** The buffers of the jobs whose bytes came in a buffer of their own (not in the ring): moved between the threads. */
export function ownBytes(jobs: readonly WriteJob[]): ArrayBuffer[] {
  return jobs.flatMap((job) => ('data' in job ? [job.data.buffer as ArrayBuffer] : []));
}

/** What the thread is started with. */
export interface WriteThreadData {
  readonly ring: SharedArrayBuffer;
}

/** The thread stopped (it failed, or it was closed) before it answered a write: its outcome is not known. */
export class WriteThreadLost extends Error {
  constructor(cause: unknown) {
    super('the write thread stopped', { cause });
  }
}

/** The thread's young generation, MiB (see #thread). */
const YOUNG_GENERATION_MB = 2;
/**
 * Bytes of the ring the main thread copies the files into for the thread: the bytes of 90
 * pages of 45 KB waiting at once. A file that does not fit (larger than a quarter of it, or
 * the ring full) is copied into a buffer of its own and moved to the thread.
 */
const RING_BYTES = 4 * 1024 * 1024;

/**
 * A worker thread that makes a node's page writes on a local disk (docs/benchmarks-log.md, "A
 * write thread on a local disk"). An atomic write through libuv's thread pool is four calls (open,
 * write, close, rename), each handed from the main thread to a pool thread and its result
 * handed back: on a machine with few cores the main thread loses its core to the pool
 * threads it wakes, about 130 us of its time per write where the calls themselves take 150
 * us of the kernel's. Here the main thread sends the writes of one turn of the event loop in
 * one message and the thread makes them with synchronous calls, one after another, and
 * answers in one message. On a network mount the calls wait for the server, and the pool's
 * four at a time pay better: WriteThread is used only on local file systems (fileSystemKind), and
 * not with --fsync (a flush per file, one at a time, would serialize the disk's waits).
 *
 * The files, their temporary names and the order of the steps are those of
 * writeFileAtomic, which uses the thread when it is given one.
 */
export class WriteThread {
  #worker: Worker | undefined;
  readonly #pending = new Map<
    number,
    { resolve: (f: WriteFailure | undefined) => void; reject: (e: unknown) => void; ringBytes: number }
  >();
  #ring: Buffer | undefined;
  /** Where the next file goes in the ring, and the bytes in use before it (freed oldest first). */
  #head = 0;
  #used = 0;
  /** Bytes that did not fit the ring are moved, not copied. */
  readonly #batch = new TurnBatch<WriteJob>((jobs) => this.#thread().postMessage(jobs, ownBytes(jobs)));
  #nextId = 0;
  /** Set once the thread failed or was closed: writes then go through the pool. */
  #stopped = false;

  /** A WriteThread when `dataDir` is on a local file system of Linux and files are not flushed; else undefined. */
  static async forDataDir(dataDir: string, options: { fsync: boolean }): Promise<WriteThread | undefined> {
    return !options.fsync && (await fileSystemKind(dataDir)) === 'local' ? new WriteThread() : undefined;
  }

  /** False once the thread failed or was closed. */
  get usable(): boolean {
    return !this.#stopped;
  }

  /**
   * Starts the thread ahead of the first write, so that the first pages' writes do not wait
   * for its module to load (about 130 ms of a busy start). An idle thread does not keep
   * the process alive.
   */
  start(): void {
    if (this.#stopped || this.#worker !== undefined) return;
    this.#thread().unref();
  }

  /**
   * Writes each file's `data` to its `tmp` and renames it to its `path`, one file after
   * another, all in one message: a file is made only if the one before it was, else it is
   * answered `skipped` (a page's html file, then its links record: docs/protocol.md,
   * invariant 2). Each answer resolves to undefined when done, to how it failed otherwise
   * (the temporary file may then be left for the caller to remove); all reject with
   * WriteThreadLost when the thread stopped first.
   */
  writeInOrder(files: readonly { tmp: string; path: string; data: string | Uint8Array }[]): Promise<WriteFailure | undefined>[] {
    if (this.#stopped) return files.map(() => Promise.reject(new WriteThreadLost(undefined)));
    let after: number | undefined;
    return files.map((file) => {
      const id = this.#nextId++;
      const answer = this.#send(id, file, after);
      after = id;
      return answer;
    });
  }

  /** Puts one file's bytes in the ring (or a buffer of its own) and its job in this turn's batch. */
  #send(
    id: number,
    { tmp, path, data }: { tmp: string; path: string; data: string | Uint8Array },
    after: number | undefined,
  ): Promise<WriteFailure | undefined> {
    const order = after === undefined ? {} : { after };
    const length = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    const place = this.#place(length);
    let ringBytes = 0;
    if (place !== undefined) {
      const ring = this.#sharedRing();
      if (typeof data === 'string') ring.write(data, place.start, length);
      else ring.set(data, place.start);
      ringBytes = place.bytes;
      this.#batch.push({ id, tmp, path, ...order, start: place.start, length });
    } else {
      // Bytes of their own, moved to the thread: the caller may keep using its buffer, and a
      // Buffer is often a view of a larger pool, which a plain message would copy whole.
      const copy = typeof data === 'string' ? new Uint8Array(Buffer.from(data)) : new Uint8Array(data);
      this.#batch.push({ id, tmp, path, ...order, data: copy });
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, ringBytes });
      if (this.#pending.size === 1) this.#worker?.ref();
    });
  }

  /**
   * A place for `length` bytes in the ring: at its head, or at its start when they do not fit
   * before its end (the bytes skipped count as used until this file is answered). Files are
   * answered in the order they were sent, so the bytes in use are always the `#used` bytes
   * before the head, and the oldest are freed first.
   */
  #place(length: number): { start: number; bytes: number } | undefined {
    if (length > RING_BYTES / 4) return undefined;
    let start = this.#head;
    let skipped = 0;
    if (start + length > RING_BYTES) {
      skipped = RING_BYTES - start;
      start = 0;
    }
    const bytes = skipped + length;
    if (this.#used + bytes > RING_BYTES) return undefined;
    this.#used += bytes;
    this.#head = (start + length) % RING_BYTES;
    return { start, bytes };
  }

  /** Ends the thread once the writes sent to it are answered; later writes are refused (WriteThreadLost). */
  close(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#pending.size === 0) void this.#worker?.terminate();
  }

  /** The ring, made when the thread starts (a node on a network mount never has one). */
  #sharedRing(): Buffer {
    this.#ring ??= Buffer.from(new SharedArrayBuffer(RING_BYTES));
    return this.#ring;
  }

  #thread(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    // '../store/': the same file from dist/src/store and from the bundle in dist/src/cli.
    // A small young generation: the records it is sent are short-lived strings, and V8's
    // default would let them fill tens of megabytes before the first collection.
    const workerData: WriteThreadData = { ring: this.#sharedRing().buffer as SharedArrayBuffer };
    const w = new Worker(new URL('../store/write-thread-worker.js', import.meta.url), {
      workerData,
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    w.on('message', ({ results }: WriteAnswer) => {
      for (const r of results) {
        const p = this.#pending.get(r.id);
        if (p === undefined) continue;
        this.#pending.delete(r.id);
        this.#used -= p.ringBytes;
        p.resolve(r.failure);
      }
      if (this.#pending.size === 0) {
        if (this.#stopped) void w.terminate();
        else w.unref();
      }
    });
    w.on('error', (err) => this.#lose(err));
    w.on('exit', (code) => this.#lose(new Error(`the write thread exited with ${code}`)));
    this.#worker = w;
    return w;
  }

  /** The thread is gone: writes not answered are lost to it (their callers write again by the pool). */
  #lose(cause: unknown): void {
    this.#stopped = true;
    const lost = new WriteThreadLost(cause);
    for (const p of this.#pending.values()) p.reject(lost);
    this.#pending.clear();
  }
}
