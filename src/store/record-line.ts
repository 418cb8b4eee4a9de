import { isUtf8 } from 'node:buffer';
import { type RecordShape, shapeHolds, type ValueKind } from './records.js';

const TAB = 0x09;
const NL = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const LBRACK = 0x5b;
const BSL = 0x5c;
const RBRACK = 0x5d;
const LBRACE = 0x7b;
const RBRACE = 0x7d;

/** The escapes JSON.stringify writes as two characters: \" \\ \b \f \n \r \t. */
const SHORT_ESCAPES: ReadonlySet<number> = new Set([QUOTE, BSL, 0x62, 0x66, 0x6e, 0x72, 0x74]);
/** Integers of at most this many digits print as they are written (below 2^53). */
const MAX_DIGITS = 15;
const LITERALS: ReadonlyMap<number, [Buffer, ValueKind]> = new Map([
  [0x74, [Buffer.from('true'), 'boolean']],
  [0x66, [Buffer.from('false'), 'boolean']],
  [0x6e, [Buffer.from('null'), 'null']],
]);

/** The index after `text` when the bytes at `i` are it, or -1. */
function literalEnd(bytes: Buffer, i: number, text: Buffer): number {
  for (let k = 0; k < text.length; k++) if (bytes[i + k] !== text[k]) return -1;
  return i + text.length;
}

/** What the scan expects next. */
const enum Next {
  Value,
  ValueOrClose,
  Key,
  KeyOrClose,
  Colon,
  CommaOrClose,
  End,
}

/**
 * The record in `bytes` as one line of JSON ending in a newline, made by copying its bytes
 * without the whitespace between tokens: the line JSON.stringify(JSON.parse(text)) gives, as
 * `mountcrawl export` prints, for every record serializeRecord writes, at a fraction of the
 * cost. Undefined when the bytes are not one whole JSON object whose top level has the fields
 * of `shape`, or hold anything JSON.stringify would print otherwise (invalid UTF-8, an escape
 * other than \" \\ \b \f \n \r \t, a number that is not a plain integer of at most 15 digits,
 * a repeated key, a key that starts with a digit, which objects order first): the caller then
 * parses and prints, which decides whether the record is torn.
 */
export function recordLine(bytes: Buffer, shape: RecordShape): Buffer | undefined {
  const out = Buffer.allocUnsafe(bytes.length + 1);
  const end = recordLineInto(bytes, shape, out, 0);
  return end < 0 ? undefined : out.subarray(0, end);
}

/**
 * recordLine written into `out` at `at`, which must have room for `bytes.length + 1` bytes
 * (the line is never longer); returns the index after the line, or -1 (with bytes of `out`
 * after `at` overwritten) when recordLine would be undefined. Lines written one after another
 * into one buffer make no buffer of their own a record.
 */
export function recordLineInto(bytes: Buffer, shape: RecordShape, out: Buffer, at: number): number {
  const n = bytes.length;
  if (!isUtf8(bytes)) return -1;
  const open: number[] = [];
  const keys: string[][] = [];
  const top = new Map<string, ValueKind>();
  let topKey = '';
  let next = Next.Value;
  let o = at;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b === SP || b === NL || b === CR || b === TAB) {
      i++;
      continue;
    }
    if (next === Next.End) return -1;
    if (next === Next.Colon) {
      if (b !== COLON) return -1;
      out[o++] = b;
      i++;
      next = Next.Value;
      continue;
    }
    const closing = (b === RBRACE && next === Next.KeyOrClose) || (b === RBRACK && next === Next.ValueOrClose);
    if (closing || next === Next.CommaOrClose) {
      const inside = open[open.length - 1];
      if (b === COMMA && !closing) next = inside === LBRACE ? Next.Key : Next.Value;
      else if ((b === RBRACE && inside === LBRACE) || (b === RBRACK && inside === LBRACK)) {
        open.pop();
        if (inside === LBRACE) keys.pop();
        next = open.length === 0 ? Next.End : Next.CommaOrClose;
      } else return -1;
      out[o++] = b;
      i++;
      continue;
    }
    if (next === Next.Key || next === Next.KeyOrClose) {
      const end = b === QUOTE ? copyString(bytes, i, out, o) : -1;
      if (end < 0 || (bytes[i + 1]! >= ZERO && bytes[i + 1]! <= NINE)) return -1;
      const key = bytes.toString('latin1', i + 1, end - 1);
      const seen = keys[keys.length - 1]!;
      if (seen.includes(key)) return -1;
      seen.push(key);
      if (open.length === 1) topKey = key;
      o += end - i;
      i = end;
      next = Next.Colon;
      continue;
    }
    // A value: the whole text is one object.
    if (open.length === 0 && b !== LBRACE) return -1;
    let kind: ValueKind;
    if (b === LBRACE || b === LBRACK) {
      kind = b === LBRACE ? 'object' : 'array';
      open.push(b);
      if (b === LBRACE) keys.push([]);
      out[o++] = b;
      i++;
      next = b === LBRACE ? Next.KeyOrClose : Next.ValueOrClose;
    } else {
      let end: number;
      if (b === QUOTE) {
        kind = 'string';
        end = copyString(bytes, i, out, o);
      } else {
        const literal = LITERALS.get(b);
        kind = literal === undefined ? 'number' : literal[1];
        end = literal === undefined ? integerEnd(bytes, i) : literalEnd(bytes, i, literal[0]);
        for (let j = i; j < end; j++) out[o + j - i] = bytes[j]!;
      }
      if (end < 0) return -1;
      o += end - i;
      i = end;
      next = Next.CommaOrClose;
    }
    if (open.length === (kind === 'object' || kind === 'array' ? 2 : 1)) top.set(topKey, kind);
  }
  if (next !== Next.End || !shapeHolds(shape, (field) => top.get(field))) return -1;
  out[o++] = NL;
  return o;
}

/** Copies the JSON string that starts at `bytes[i]` (a quote) to `out` at `o`; returns the index after its closing quote, or -1 when it is not one JSON.stringify would print the same. */
function copyString(bytes: Buffer, i: number, out: Buffer, o: number): number {
  out[o++] = QUOTE;
  for (let j = i + 1; j < bytes.length; j++) {
    const c = bytes[j]!;
    out[o++] = c;
    if (c === QUOTE) return j + 1;
    if (c < SP) return -1;
    if (c === BSL) {
      const e = bytes[++j];
      if (e === undefined || !SHORT_ESCAPES.has(e)) return -1;
      out[o++] = e;
    }
  }
  return -1;
}

/** The index after the integer at `bytes[i]` (an optional minus, then 0 or a digit 1 to 9 and more digits, at most MAX_DIGITS), or -1; -0 does not print as written. */
function integerEnd(bytes: Buffer, i: number): number {
  let j = bytes[i] === MINUS ? i + 1 : i;
  const first = j;
  if (bytes[j] === ZERO) return j === i ? j + 1 : -1;
  while (j < bytes.length && bytes[j]! >= ZERO && bytes[j]! <= NINE) j++;
  return j > first && j - first <= MAX_DIGITS ? j : -1;
}
