import { readFileSync } from 'node:fs';
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

/**
 * Reads the JSON record at `path` that another node may remove or replace at any moment, and
 * says which of the three it was (RecordRead); `check` validates the parsed value and throws
 * a TypeError when it is not a record of its kind. Any other error (EIO, ESTALE, EACCES: the
 * mount failing) is thrown: whether to try again is the caller's decision.
 */
export async function readRecord<T>(mount: Mount, path: string, check: (value: unknown) => T): Promise<RecordRead<T>> {
  try {
    return { kind: 'value', value: await readJsonValidated(mount, path, check) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT;
    if (isTornRead(err)) return { kind: 'torn', error: err };
    throw err;
  }
}

/**
 * Reads a JSON file that another node may replace at any moment, and returns what `check`
 * makes of the parsed value. A read that does not parse or does not pass `check` is retried
 * (a torn read over FUSE), a few times with a short pause on the node's clock; then the last
 * error is thrown. ENOENT is thrown at once (the file is gone: the caller decides what that
 * means).
 */
export async function readJsonValidated<T>(mount: Mount, path: string, check: (value: unknown) => T): Promise<T> {
  let lastError: unknown;
  for (let attempt = 0; attempt < VALIDATE_ATTEMPTS; attempt++) {
    // On the real file system a short read is taken as the end: a record cut short does not parse.
    const bytes = mount.native ? await readWhole(path, { shortReadEnds: true }) : await mount.fs.readFile(path);
    try {
      return check(JSON.parse(bytes.toString('utf8')));
    } catch (err) {
      lastError = err;
      await new Promise<void>((resolve) => mount.clock.setTimeout(resolve, 5 * (attempt + 1)));
    }
  }
  throw lastError;
}

/**
 * readRecord for a record on a local disk (fileSystemKind `local`), read synchronously: there a
 * read is answered at once and costs less than its hand-off to libuv's threads, and a rename
 * replaces a file whole, so a read that does not parse is a file that is not such a record
 * (`torn`, not read again).
 */
export function readLocalRecord<T>(path: string, check: (value: unknown) => T): RecordRead<T> {
  try {
    return { kind: 'value', value: check(JSON.parse(readFileSync(path, 'utf8'))) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT;
    if (isTornRead(err)) return { kind: 'torn', error: err };
    throw err;
  }
}
