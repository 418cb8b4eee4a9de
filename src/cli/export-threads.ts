import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** One record to make a line of: its key, and whether it is an errs record (else a links record). */
export interface RecordToRead {
  readonly key: string;
  readonly errs: boolean;
}

/**
 * What a thread is asked: the lines of the records `keys` of one host (one string, the keys
 * joined by newlines: one string is copied to a thread faster than many), in order, with only
 * `fields` (all when undefined); those before `firstErrs` are links records in `linksDir`, the
 * others errs records in `errsDir` (a host's lines are its links records, then its errs records).
 */
export interface LinesJob {
  readonly id: number;
  readonly fields: readonly string[] | undefined;
  readonly linksDir: string;
  readonly errsDir: string;
  readonly keys: string;
  readonly firstErrs: number;
}

/** A thread's answer: the lines (an absent or torn record has none), or the error that stopped it (an Error does not cross threads whole). */
export type LinesAnswer =
  | { readonly id: number; readonly lines: Uint8Array }
  | { readonly id: number; readonly error: { readonly message: string; readonly code?: string | undefined } };

/** Threads at most, however many cores: the kernel's calls on one directory tree stop scaling before that. */
const MAX_THREADS = 4;

interface Thread {
  readonly worker: Worker;
  /** Jobs sent to it and not answered. */
  readonly jobs: Set<number>;
}

/**
 * Threads that make the lines of local records (export-thread-worker.ts): there a record is
 * read with synchronous calls, so reading and printing are CPU work, which one thread caps at
 * one core (docs/benchmarks.md, "Export's CPU a record"). A thread is started when a job finds
 * every one busy, up to one per core. A job is a few hundred records, so that the message
 * each way costs little beside them.
 */
export class LineThreads {
  /** Threads at most. */
  readonly max: number;
  readonly #threads: Thread[] = [];
  readonly #pending = new Map<number, { resolve: (lines: Buffer) => void; reject: (err: unknown) => void }>();
  #nextId = 0;

  constructor(max = Math.min(MAX_THREADS, availableParallelism())) {
    this.max = Math.max(1, max);
  }

  /**
   * The lines of `records` (links records, then errs records, of the host whose directories
   * are `dirs`), each ending in a newline, in order; rejects with the error of a record that
   * could not be read (not absent, not torn).
   */
  lines(dirs: { links: string; errs: string }, records: readonly RecordToRead[], fields: readonly string[] | undefined): Promise<Buffer> {
    const id = this.#nextId++;
    const thread = this.#pick();
    thread.jobs.add(id);
    const firstErrs = records.findIndex((r) => r.errs);
    const keys = records.map((r) => r.key).join('\n');
    const job: LinesJob = {
      id,
      fields,
      linksDir: dirs.links,
      errsDir: dirs.errs,
      keys,
      firstErrs: firstErrs < 0 ? records.length : firstErrs,
    };
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      thread.worker.postMessage(job);
    });
  }

  /** Stops the threads (their jobs not answered are rejected). */
  async close(): Promise<void> {
    await Promise.all(this.#threads.map((t) => t.worker.terminate()));
  }

  /** The thread with fewest jobs, or a new one when every thread has some and there is room. */
  #pick(): Thread {
    const idlest = this.#threads.reduce<Thread | undefined>(
      (best, t) => (best === undefined || t.jobs.size < best.jobs.size ? t : best),
      undefined,
    );
    if (idlest !== undefined && (idlest.jobs.size === 0 || this.#threads.length >= this.max)) return idlest;
    return this.#start();
  }

  #start(): Thread {
    // './': the same directory from dist/src/cli and from the bundle beside it.
    const worker = new Worker(new URL('./export-thread-worker.js', import.meta.url));
    const thread: Thread = { worker, jobs: new Set() };
    worker.on('message', (answer: LinesAnswer) => {
      thread.jobs.delete(answer.id);
      const pending = this.#pending.get(answer.id);
      this.#pending.delete(answer.id);
      if (pending === undefined) return;
      if ('lines' in answer) pending.resolve(Buffer.from(answer.lines.buffer, answer.lines.byteOffset, answer.lines.byteLength));
      else pending.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }));
    });
    const lost = (err: unknown): void => {
      for (const id of thread.jobs) {
        this.#pending.get(id)?.reject(err);
        this.#pending.delete(id);
      }
      thread.jobs.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`an export thread stopped (exit code ${code})`)));
    this.#threads.push(thread);
    return thread;
  }
}
