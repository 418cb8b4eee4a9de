import { createRequire } from 'node:module';
import type { MultiBar, SingleBar } from 'cli-progress';
import { formatLine, tailParts, type Snapshot } from './snapshot.js';
import type { StreamLogger } from './logger.js';

// cli-progress is CommonJS; load it the way Node resolves it and keep its typings.
const cliProgress = createRequire(import.meta.url)('cli-progress') as typeof import('cli-progress');

/** How often a plain progress line is printed when stderr is not a terminal. */
const PLAIN_INTERVAL_MS = 5_000;

const FORMAT = '{label} [{bar}] {value}/{total} pages | {queued} queued | {errors} err | {rate}/s | round {round}{tail}';

/**
 * A log line printed above the bars. The bars' lines are cleared below the cursor first (a
 * shorter line would leave the end of a bar line behind it), and the terminal wraps the line
 * (the bars turn wrapping off), so that it is shown whole.
 */
export function aboveBars(line: string): string {
  return `\x1b[J\x1b[?7h${line}\x1b[?7l\n`;
}

/** What the display writes to: stderr, or a stand-in terminal in tests. */
export type DisplayStream = NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number };

/**
 * Live progress (docs/options.md, "Output"): on a terminal, cli-progress bars (one per snapshot: one node,
 * or every child and a total under --processes), with log lines printed above them; off a
 * terminal, one plain log line every five seconds. `enabled: false` shows nothing.
 */
export class ProgressDisplay {
  readonly #tty: boolean;
  readonly #enabled: boolean;
  readonly #logger: StreamLogger;
  readonly #stream: DisplayStream;
  #multi: MultiBar | undefined;
  readonly #bars = new Map<string, SingleBar>();
  #timer: NodeJS.Timeout | undefined;
  #lastPlain = 0;

  constructor(options: { enabled: boolean; json: boolean; stream?: DisplayStream }, logger: StreamLogger) {
    this.#stream = options.stream ?? process.stderr;
    this.#enabled = options.enabled;
    this.#tty = options.enabled && !options.json && this.#stream.isTTY === true;
    this.#logger = logger;
  }

  /** Starts refreshing from `read` (called a few times a second on a terminal). */
  start(read: () => Snapshot[]): void {
    if (!this.#enabled) return;
    if (this.#tty) {
      // forceRedraw: a bar whose numbers did not change is drawn again all the same, below
      // the log lines that moved it down.
      this.#multi = new cliProgress.MultiBar(
        {
          format: FORMAT,
          stream: this.#stream,
          hideCursor: true,
          clearOnComplete: false,
          stopOnComplete: false,
          forceRedraw: true,
          fps: 5,
          etaBuffer: 50,
        },
        cliProgress.Presets.shades_classic,
      );
      const multi = this.#multi;
      this.#logger.setWriter((line) => multi.log(aboveBars(line)));
    }
    this.#timer = setInterval(() => this.#render(read()), this.#tty ? 250 : 1_000);
    this.#timer.unref();
  }

  #render(snaps: Snapshot[]): void {
    if (this.#multi === undefined) {
      const now = Date.now();
      if (now - this.#lastPlain < PLAIN_INTERVAL_MS) return;
      this.#lastPlain = now;
      for (const s of snaps) this.#logger.info(formatLine(s));
      return;
    }
    for (const s of snaps) {
      const payload = {
        label: s.label.padEnd(12).slice(0, 24),
        queued: s.queued,
        errors: s.errors,
        rate: s.rate.toFixed(1),
        round: s.round,
        tail: tailParts(s)
          .map((p) => ` | ${p}`)
          .join(''),
      };
      const total = Math.max(1, s.pages + s.queued + s.inFlight);
      let bar = this.#bars.get(s.label);
      if (bar === undefined) {
        bar = this.#multi.create(total, s.pages, payload);
        this.#bars.set(s.label, bar);
      }
      bar.setTotal(total);
      bar.update(s.pages, payload);
    }
  }

  /** Stops refreshing, prints the log lines still waiting for the bars' next refresh, and restores plain logging. */
  stop(last?: Snapshot[]): void {
    if (this.#timer) clearInterval(this.#timer);
    if (last !== undefined && this.#multi !== undefined) this.#render(last);
    if (this.#multi !== undefined) {
      this.#multi.update();
      this.#multi.stop();
      this.#multi = undefined;
      const stream = this.#stream;
      this.#logger.setWriter((line) => stream.write(`${line}\n`));
    }
  }
}
