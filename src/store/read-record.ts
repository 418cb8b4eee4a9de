import { readJsonValidated } from './read-whole.js';

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
export async function readRecord<T>(path: string, check: (value: unknown) => T): Promise<RecordRead<T>> {
  try {
    return { kind: 'value', value: await readJsonValidated(path, check) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT;
    if (isTornRead(err)) return { kind: 'torn', error: err };
    throw err;
  }
}
