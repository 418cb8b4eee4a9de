import { closeSync, openSync, readSync } from 'node:fs';
import type { Mount } from './mount.js';
import { readWhole, VALIDATE_ATTEMPTS } from './read-whole.js';

/**
 * What reading a JSON record gave: `absent` (no file by that name: never written, or removed
 * or moved meanwhile), `torn` (it did not parse or did not pass its check, even after the
 * rereads of readJsonValidated: a torn read over FUSE, docs/protocol.md "What the file system
 * must give", or a file that is not such a record), or its `value`.
 */
export type RecordRead<T> =
  | { readonly kind: 'absent' }
  | { readonly kind: 'torn'; readonly error: SyntaxError | TypeError }
  | { readonly kind: 'value'; readonly value: T };

const ABSENT: RecordRead<never> = Object.freeze({ kind: 'absent' });

/** True for what a torn or foreign record throws when parsed and checked: a SyntaxError (JSON.parse) or a TypeError (the check). */
export function isTornRead(err: unknown): err is SyntaxError | TypeError {
  return err instanceof SyntaxError || err instanceof TypeError;
}

/** What a record's bytes are decoded by: throws a SyntaxError or a TypeError when they are not such a record (torn, or foreign). */
export type Decode<T> = (bytes: Buffer) => T;

/** The decoding of a JSON record: parsed, then validated by `check` (which throws a TypeError when it is not a record of its kind). */
export function jsonRecord<T>(check: (value: unknown) => T): Decode<T> {
  return (bytes) => check(JSON.parse(bytes.toString('utf8')));
}

/**
 * Reads the JSON record at `path` that another node may remove or replace at any moment, and
 * says which of the three it was (RecordRead); `check` validates the parsed value and throws
 * a TypeError when it is not a record of its kind. Any other error (EIO, ESTALE, EACCES: the
 * mount failing) is thrown: whether to try again is the caller's decision.
 */
export function readRecord<T>(mount: Mount, path: string, check: (value: unknown) => T): Promise<RecordRead<T>> {
  return readRecordBytes(mount, path, jsonRecord(check));
}

/** readRecord with the bytes decoded by `decode` (readDecoded; `read` reads them, readDecoded's way by default). */
export async function readRecordBytes<T>(mount: Mount, path: string, decode: Decode<T>, read?: ReadBytes): Promise<RecordRead<T>> {
  try {
    return { kind: 'value', value: await readDecoded(mount, path, decode, read) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT;
    if (isTornRead(err)) return { kind: 'torn', error: err };
    throw err;
  }
}

/**
 * Reads a JSON file that another node may replace at any moment, and returns what `check`
 * makes of the parsed value (readDecoded).
 */
export function readJsonValidated<T>(mount: Mount, path: string, check: (value: unknown) => T): Promise<T> {
  return readDecoded(mount, path, jsonRecord(check));
}

/** What reads a record's bytes (readDecoded): the whole file by default, or a part of it that `decode` expects. */
export type ReadBytes = (path: string) => Promise<Buffer>;

/**
 * Reads a file that another node may replace at any moment, and returns what `decode` makes
 * of its bytes (read by `read`, when given). A read that `decode` rejects is retried (a torn
 * read over FUSE), a few times with a short pause on the node's clock; then the last error is
 * thrown. ENOENT is thrown at once (the file is gone: the caller decides what that means).
 */
export async function readDecoded<T>(mount: Mount, path: string, decode: Decode<T>, read?: ReadBytes): Promise<T> {
  let lastError: unknown;
  for (let attempt = 0; attempt < VALIDATE_ATTEMPTS; attempt++) {
    // On the real file system a short read is taken as the end: a record cut short does not parse.
    const bytes = read ? await read(path) : mount.native ? await readWhole(path, { shortReadEnds: true }) : await mount.fs.readFile(path);
    try {
      return decode(bytes);
    } catch (err) {
      lastError = err;
      await new Promise<void>((resolve) => mount.clock.setTimeout(resolve, 5 * (attempt + 1)));
    }
  }
  throw lastError;
}

/** The buffer local records are read into (readLocalRecord), grown to the largest record read. */
let scratch = Buffer.allocUnsafe(64 * 1024);

/**
 * readRecordBytes for a record on a local disk (fileSystemKind `local`), read synchronously:
 * there a read is answered at once and costs less than its hand-off to libuv's threads, and a
 * rename replaces a file whole, so bytes that `decode` rejects are a file that is not such a
 * record (`torn`, not read again). One open, one read (a short read is the end of a local
 * file), one close. The bytes `decode` gets are valid only until it returns.
 */
export function readLocalRecord<T>(path: string, decode: Decode<T>): RecordRead<T> {
  let bytes: Buffer;
  try {
    bytes = readLocal(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT;
    throw err;
  }
  try {
    return { kind: 'value', value: decode(bytes) };
  } catch (err) {
    if (isTornRead(err)) return { kind: 'torn', error: err };
    throw err;
  }
}

function readLocal(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    let total = 0;
    for (;;) {
      const asked = scratch.length - total;
      const got = readSync(fd, scratch, total, asked, null);
      total += got;
      if (got < asked) return scratch.subarray(0, total);
      const bigger = Buffer.allocUnsafe(scratch.length * 4);
      scratch.copy(bigger, 0, 0, total);
      scratch = bigger;
    }
  } finally {
    closeSync(fd);
  }
}
