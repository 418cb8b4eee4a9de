import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { NormalizeOptions } from '../url/normalize.js';
import { TurnBatch } from '../util/turn-batch.js';
import { extractLinks, type ExtractedLinks, type ExtractOptions } from './link-extractor.js';

/** One page as the thread is asked it: extractLinks's arguments, the body a copy of the page's own. */
export interface ExtractJob {
  readonly id: number;
  readonly body: Uint8Array;
  readonly pageUrl: string;
  readonly contentType: string | null;
  readonly truncated: boolean;
  readonly obeyRelNofollow: boolean;
}

/** The thread's answer for one page: what extractLinks returned, or that it threw (the main thread then runs it to get the error). */
export type ExtractResult = { readonly id: number } & ({ readonly links: ExtractedLinks } | { readonly failed: string });

/** What the thread is started with (a Set crosses threads whole). */
export interface ExtractThreadData {
  readonly normalize: NormalizeOptions;
}

/** The thread's first message: it listens now. */
export const READY = 'ready';

/** '../extract/': the same file from dist/src/extract and from the bundle in dist/src/cli. */
const WORKER_FILE = new URL('../extract/extract-thread-worker.js', import.meta.url);

/** The thread's young generation, MiB: its garbage is the strings of one batch of pages, dead as soon as the batch is answered. */
const YOUNG_GENERATION_MB = 4;

interface Pending {
  readonly args: Parameters<typeof extractLinks>;
  readonly resolve: (links: ExtractedLinks) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * A worker thread that finds the links of a node's HTML pages (extractLinks: the encoding,
 * the tag scanner, resolution and normalization of every href), so that the main thread, the
 * one that runs the requests, the frontier and the commits, is not also the one that reads
 * every byte of every page (docs/benchmarks-log.md, "Links found in a thread"). The main thread
 * copies a page's body into a buffer of its own and moves it to the thread with the pages of
 * the same turn of the event loop, in one message; the thread answers them in one message.
 * The links are those extractLinks returns on the main thread, byte for byte: the thread runs
 * the same function.
 *
 * Until the thread listens (the first pages of a crawl), after it stopped, and for a page it
 * failed on, the main thread runs extractLinks itself: a page's links never depend on the
 * thread being there.
 */
export class ExtractThread {
  readonly #normalize: NormalizeOptions;
  readonly #workerFile: URL;
  #worker: Worker | undefined;
  #ready = false;
  /** Set once the thread failed or was closed: pages are then read on the main thread. */
  #stopped = false;
  readonly #pending = new Map<number, Pending>();
  /** The bodies are moved, not copied (each is a copy of its own). */
  readonly #batch = new TurnBatch<ExtractJob>((jobs) =>
    this.#worker!.postMessage(
      jobs,
      jobs.map((j) => j.body.buffer as ArrayBuffer),
    ),
  );
  #nextId = 0;
  #byThread = 0;

  /** `workerFile`: the thread's module (a test gives one that fails). */
  constructor(normalize: NormalizeOptions, workerFile: URL = WORKER_FILE) {
    this.#normalize = normalize;
    this.#workerFile = workerFile;
  }

  /** True once the thread listens (and until it stops): pages go to it. */
  get listening(): boolean {
    return this.#ready && !this.#stopped;
  }

  /** Pages whose links the thread found (the others were read on the main thread). */
  get pagesByThread(): number {
    return this.#byThread;
  }

  /**
   * An ExtractThread when the process has a core of its own for it: at least two cores per
   * process of this machine's crawl (`processes`: 1, or N of --processes N). With fewer, the
   * thread would take its core from another node's main thread and add the cost of moving
   * each page to it (docs/benchmarks-log.md, "Links found in a thread").
   */
  static forProcesses(normalize: NormalizeOptions, processes: number, cores: number = availableParallelism()): ExtractThread | undefined {
    return cores >= 2 * processes ? new ExtractThread(normalize) : undefined;
  }

  /**
   * Starts the thread ahead of the first page: its modules load (about 100 ms on an idle core,
   * 300 on a busy one) while the first requests wait, and fewer pages are read on the main
   * thread meanwhile.
   */
  start(): void {
    this.#thread();
  }

  /** extractLinks's answer for one page, from the thread once it listens, else from the main thread. */
  extract(
    body: Uint8Array,
    pageUrl: string,
    contentType: string | null,
    truncated: boolean,
    options: ExtractOptions,
  ): Promise<ExtractedLinks> {
    const args: Parameters<typeof extractLinks> = [body, pageUrl, contentType, truncated, this.#normalize, options];
    this.#thread();
    if (!this.#ready || this.#stopped) return Promise.resolve().then(() => extractLinks(...args));
    const id = this.#nextId++;
    // A copy of the bytes of the page, moved: the caller keeps its buffer (it writes it next),
    // and a Buffer is often a view of a larger one, which a plain message would copy whole.
    this.#batch.push({
      id,
      body: new Uint8Array(body),
      pageUrl,
      contentType,
      truncated,
      obeyRelNofollow: options.obeyRelNofollow === true,
    });
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { args, resolve, reject });
      if (this.#pending.size === 1) this.#worker?.ref();
    });
  }

  /** Ends the thread once the pages sent to it are answered; later pages are read on the main thread. */
  close(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    // Every page queued for the thread is pending too: none left means none to send.
    if (this.#pending.size === 0) void this.#worker?.terminate();
  }

  /** The thread, started by `start` or at the first page. */
  #thread(): void {
    if (this.#worker !== undefined || this.#stopped) return;
    const workerData: ExtractThreadData = { normalize: this.#normalize };
    let w: Worker;
    try {
      w = new Worker(this.#workerFile, { workerData, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
    } catch {
      // No thread (no file, no resources for one): the pages are read here, as without it.
      this.#stopped = true;
      return;
    }
    w.on('message', (answer: typeof READY | readonly ExtractResult[]) => {
      if (answer === READY) {
        this.#ready = true;
        return;
      }
      for (const r of answer) {
        const p = this.#pending.get(r.id);
        if (p === undefined) continue;
        this.#pending.delete(r.id);
        if ('links' in r) {
          this.#byThread++;
          p.resolve(r.links);
        } else this.#inline(p);
      }
      if (this.#pending.size === 0) {
        if (this.#stopped) void w.terminate();
        else w.unref();
      }
    });
    w.on('error', () => this.#lose());
    w.on('exit', () => this.#lose());
    // After the listeners: adding the 'message' one refs the thread again.
    w.unref();
    this.#worker = w;
  }

  /** extractLinks on the main thread: its answer, or the error it throws, is the page's. */
  #inline(p: Pending): void {
    try {
      p.resolve(extractLinks(...p.args));
    } catch (err) {
      p.reject(err);
    }
  }

  /** The thread is gone: the pages it had not answered, and those not sent yet, are read here. */
  #lose(): void {
    this.#stopped = true;
    this.#batch.clear();
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) this.#inline(p);
  }
}
