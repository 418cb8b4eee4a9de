/**
 * Every error mountcrawl reports carries a stable `code`. Codes of fetch failures are what
 * errs/ records hold; codes of run failures are what the CLI prints. docs/errors.md lists
 * each code, what it means and how to fix it: keep the two in step.
 */

/** What the crawler should do after a failed fetch. */
export type FailureKind = 'transient' | 'final';

/** Base class: an error with a stable code. */
export class MountcrawlError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MountcrawlError';
    this.code = code;
  }
}

/**
 * A failure of one URL: recorded in errs/<host>/<key>.json. `kind` says whether a later
 * attempt can help (timeouts, resets, 5xx, 429) or not (404, robots, binary body).
 */
export class FetchFailure extends MountcrawlError {
  readonly kind: FailureKind;
  /** HTTP status when the failure is an HTTP answer. */
  readonly status: number | undefined;
  /** Milliseconds the server asked us to wait (Retry-After), when it did. */
  readonly retryAfterMs: number | undefined;
  constructor(code: string, kind: FailureKind, message: string, extra: { status?: number; retryAfterMs?: number; cause?: unknown } = {}) {
    // A fetch failure is data (it goes into an errs record), made thousands of times in a
    // crawl: no stack trace to capture.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(code, message, { cause: extra.cause });
    Error.stackTraceLimit = limit;
    this.name = 'FetchFailure';
    this.kind = kind;
    this.status = extra.status;
    this.retryAfterMs = extra.retryAfterMs;
  }
}

/** Exit codes of the CLI (docs/errors.md). */
export const ExitCode = {
  OK: 0,
  USAGE: 2,
  DATA_DIR: 3,
  MOUNT: 4,
  /** The crawl fetched nothing: every seed failed and no page was stored (NOTHING_FETCHED). */
  NOTHING_FETCHED: 5,
  INTERNAL: 70,
  /** The data directory exists but this user cannot write it (sysexits EX_NOPERM). */
  DATA_DIR_NOT_WRITABLE: 77,
  INTERRUPTED: 130,
  TERMINATED: 143,
} as const;

/**
 * An error that ends the run: printed as one line `mountcrawl: CODE: message`, then the
 * process exits with `exitCode`. No stack trace unless MOUNTCRAWL_DEBUG is set.
 */
export class FatalError extends MountcrawlError {
  readonly exitCode: number;
  constructor(code: string, message: string, exitCode: number, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'FatalError';
    this.exitCode = exitCode;
  }
}

/** A bad command-line option or argument. */
export function usageError(message: string): FatalError {
  return new FatalError('BAD_OPTION', message, ExitCode.USAGE);
}

/** `crawl` with no URL to start from: none given, none in the data directory's seeds/, no --watch. */
export function noSeedsError(dataDir: string): FatalError {
  return new FatalError(
    'NO_SEEDS',
    `nothing to crawl: give URLs, --seeds-file, or add seeds with \`mountcrawl seed URL --data ${dataDir}\` (or use --watch to wait for them)`,
    ExitCode.USAGE,
  );
}

/** A URL given by the user that cannot be crawled. */
export function badUrlError(input: string, reason: string): FatalError {
  return new FatalError('BAD_URL', `${JSON.stringify(input)}: ${reason}`, ExitCode.USAGE);
}

/** File system error codes that mean the mount itself is failing, not one file. */
const MOUNT_FAULTS: Record<string, string> = {
  ENOSPC: 'DISK_FULL',
  EDQUOT: 'DISK_FULL',
  EROFS: 'READ_ONLY',
  EIO: 'MOUNT_IO',
  ESTALE: 'MOUNT_IO',
  ENOTCONN: 'MOUNT_IO',
  ECONNABORTED: 'MOUNT_IO',
  ETIMEDOUT: 'MOUNT_IO',
  EACCES: 'NOT_WRITABLE',
  EPERM: 'NOT_WRITABLE',
};

/**
 * Maps a Node.js file system error to a mount fault code (DISK_FULL, READ_ONLY, MOUNT_IO,
 * NOT_WRITABLE), or undefined when the error is not a fault of the mount as a whole.
 */
export function mountFaultCode(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === undefined ? undefined : MOUNT_FAULTS[code];
}

/** One-line description of any thrown value, for logs and errs records. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    const msg = err.message || err.name;
    return code && !msg.includes(code) ? `${code}: ${msg}` : msg;
  }
  return String(err);
}
