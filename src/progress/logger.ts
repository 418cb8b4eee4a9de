/** Severity of a log line: `debug` is a detail of the machinery, for --verbose and --json. */
export type Level = 'debug' | 'info' | 'warn' | 'error';

/** Where a node's messages go (passed in, like the clock: docs/architecture.md, "Inputs"). */
export interface Logger {
  /** A detail of the machinery (a reseed's counters, membership changes): printed with --verbose, and in --json. */
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A sink for finished lines; the progress display swaps it to print above its bars. */
export type LineWriter = (line: string) => void;

/**
 * Log lines on stderr: `mountcrawl: message key=value` in plain mode, one JSON object per
 * line with `--json`. `quiet` drops info and debug lines (--no-progress keeps warnings and
 * errors); plain mode prints debug lines only when `verbose`.
 */
export class StreamLogger implements Logger {
  #write: LineWriter;

  constructor(
    private readonly options: { json: boolean; quiet: boolean; verbose?: boolean; nodeId?: string; clock?: () => number },
    write: LineWriter = (line) => process.stderr.write(`${line}\n`),
  ) {
    this.#write = write;
  }

  /** Redirects output (to print above a progress bar); returns the previous writer. */
  setWriter(write: LineWriter): LineWriter {
    const old = this.#write;
    this.#write = write;
    return old;
  }

  /** Passes a line that is already formatted (a supervised child's) through as it is. */
  forward(line: string): void {
    this.#write(line);
  }

  debug(message: string, fields?: Record<string, unknown>): void {
    if (!this.options.quiet && (this.options.json || this.options.verbose === true)) this.#log('debug', message, fields);
  }

  info(message: string, fields?: Record<string, unknown>): void {
    if (!this.options.quiet) this.#log('info', message, fields);
  }

  warn(message: string, fields?: Record<string, unknown>): void {
    this.#log('warn', message, fields);
  }

  error(message: string, fields?: Record<string, unknown>): void {
    this.#log('error', message, fields);
  }

  #log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
    if (this.options.json) {
      const time = new Date(this.options.clock?.() ?? Date.now()).toISOString();
      this.#write(JSON.stringify({ time, level, node: this.options.nodeId, msg: message, ...fields }));
      return;
    }
    const extra = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    // Errors start with their CODE already; warnings say so.
    const prefix = level === 'warn' ? 'mountcrawl: warning:' : 'mountcrawl:';
    this.#write(extra === '' ? `${prefix} ${message}` : `${prefix} ${message} ${extra}`);
  }
}

/** A logger that drops everything (tests, library use). */
export const silentLogger: Logger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});
