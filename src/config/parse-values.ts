import { usageError } from '../errors.js';

/**
 * Parsers for option values: each returns the value or throws a one-line BAD_OPTION error
 * that names the option and what was given.
 */

/** A whole number >= min; `inf`/`unlimited` gives Infinity when `allowInfinity`. */
export function parseWhole(flag: string, raw: string, min: number, allowInfinity = false): number {
  const v = raw.trim().toLowerCase();
  if (allowInfinity && (v === 'inf' || v === 'infinity' || v === 'unlimited' || v === 'none')) return Infinity;
  if (!/^[0-9]+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) {
    throw usageError(`${flag} must be a whole number >= ${min}${allowInfinity ? " (or 'unlimited')" : ''}, got ${JSON.stringify(raw)}`);
  }
  return Number(v);
}

/** A TCP port, 0 (any free port) to 65535. */
export function parsePort(flag: string, raw: string): number {
  const port = parseWhole(flag, raw, 0);
  if (port > 65_535) throw usageError(`${flag} must be a port number from 0 to 65535, got ${JSON.stringify(raw)}`);
  return port;
}

/** Longest delay a Node.js timer takes (about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A decimal number of seconds > 0 (`2`, `0.5`), returned in whole milliseconds: at least 1
 * unless `allowZero`, at most MAX_TIMER_MS.
 */
export function parseSeconds(flag: string, raw: string, allowZero = false): number {
  const v = raw.trim();
  const n = Number(v);
  const ms = Math.round(n * 1000);
  if (v === '' || !Number.isFinite(n) || n < 0 || (!allowZero && ms === 0) || ms > MAX_TIMER_MS) {
    throw usageError(
      `${flag} must be a number of seconds${allowZero ? ' >= 0' : ' > 0'} and at most ${MAX_TIMER_MS / 1000}, got ${JSON.stringify(raw)}`,
    );
  }
  return ms;
}

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};

/** A byte count of at least 1: `1048576`, `512k`, `10MiB`, `1GB` (k, m, g are binary; kb, mb, gb decimal). */
export function parseSize(flag: string, raw: string): number {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*$/i.exec(raw);
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  const bytes = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : 0;
  if (bytes < 1 || !Number.isSafeInteger(bytes)) {
    throw usageError(`${flag} must be a size such as 1048576, 512k or 10MiB, got ${JSON.stringify(raw)}`);
  }
  return bytes;
}

/** A regular expression (JavaScript syntax). */
export function parseRegex(flag: string, raw: string): RegExp {
  try {
    return new RegExp(raw);
  } catch (err) {
    throw usageError(`${flag} ${JSON.stringify(raw)} is not a valid regular expression: ${(err as Error).message}`);
  }
}

/** One of a fixed set of words. */
export function parseChoice<T extends string>(flag: string, raw: string, choices: readonly T[]): T {
  if (!(choices as readonly string[]).includes(raw)) {
    throw usageError(`${flag} must be one of ${choices.join(', ')}, got ${JSON.stringify(raw)}`);
  }
  return raw as T;
}

/** A node id: letters, digits, `.`, `_`, `-`, at most 64 characters. */
export function parseNodeId(flag: string, raw: string): string {
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/.test(raw)) {
    throw usageError(`${flag} must be 1 to 64 letters, digits, '.', '_' or '-' (not starting with '.'), got ${JSON.stringify(raw)}`);
  }
  return raw;
}

/** The default node id: host name and pid, made safe for a file name. */
export function defaultNodeId(hostname: string, pid: number): string {
  const host =
    hostname
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/^\.+/, '')
      .slice(0, 48) || 'node';
  return `${host}-${pid}`;
}
