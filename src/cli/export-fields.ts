import { ExitCode, FatalError } from '../errors.js';
import type { Decode } from '../store/read-record.js';
import { recordLine } from '../store/record-line.js';
import type { RecordShape } from '../store/records.js';

/**
 * The fields `export --fields` may name: `key` (the record's file name), then those of links
 * records and of errs records (src/store/records.ts). A record without a field asked for has
 * it left out of its line.
 */
export const EXPORT_FIELDS: readonly string[] = [
  'key',
  'v',
  'url',
  'finalUrl',
  'status',
  'contentType',
  'bytes',
  'truncated',
  'fetchedAt',
  'capturedAt',
  'depth',
  'node',
  'durationMs',
  'html',
  'charset',
  'etag',
  'lastModified',
  'redirects',
  'data',
  'file',
  'robots',
  'links',
  'signature',
  'changedAt',
  'intervalMs',
  'nextFetchAt',
  'history',
  'sitemap',
  'code',
  'message',
  'final',
  'attempts',
  'firstAt',
  'lastAt',
  'nextAttemptAt',
  'referrer',
];

/** The fields a host summary has for every page it covers (docs/protocol.md, "Host summaries"). */
const SUMMARY_FIELDS: ReadonlySet<string> = new Set(['key', 'url', 'depth']);

/** `--fields a,b,c`: the names in the order given, each once; a name not in EXPORT_FIELDS is bad usage (one line, exit 2). */
export function parseFields(text: string): readonly string[] {
  const fields = [...new Set(text.split(',').map((f) => f.trim()))];
  const bad = fields.filter((f) => !EXPORT_FIELDS.includes(f));
  if (bad.length > 0 || fields.length === 0) {
    const what = bad.length > 0 ? `unknown field${bad.length > 1 ? 's' : ''} ${bad.map((f) => JSON.stringify(f)).join(', ')}` : 'no field';
    throw new FatalError('BAD_OPTION', `--fields: ${what}; valid fields: ${EXPORT_FIELDS.join(', ')}`, ExitCode.USAGE);
  }
  return fields;
}

/** True when every field asked for is in a host summary: the pages it covers need not be read. */
export function summaryHasFields(fields: readonly string[]): boolean {
  return fields.every((f) => SUMMARY_FIELDS.has(f));
}

/** The line of a record with only `fields` (all of them when undefined), in the order asked; `key` is its file name. */
export function exportLine(key: string, record: Record<string, unknown>, fields: readonly string[] | undefined): string {
  if (fields === undefined) return JSON.stringify(record);
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const value = f === 'key' ? key : record[f];
    if (value !== undefined) out[f] = value;
  }
  return JSON.stringify(out);
}

/**
 * The decoding of a record's bytes into its line (ending in a newline): every field copied as
 * bytes by recordLine when it can, else parsed, validated by `check` and printed by exportLine;
 * throws (a SyntaxError or TypeError) when the bytes are not a record of `shape`.
 */
export function exportDecoder(
  key: string,
  shape: RecordShape,
  check: (v: unknown) => object,
  fields: readonly string[] | undefined,
): Decode<Buffer> {
  return (bytes) => {
    const whole = fields === undefined ? recordLine(bytes, shape) : undefined;
    return whole ?? Buffer.from(`${exportLine(key, check(JSON.parse(bytes.toString('utf8'))) as Record<string, unknown>, fields)}\n`);
  };
}
