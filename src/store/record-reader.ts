import { fileSystemKind } from './fs-kind.js';
import type { Layout } from './layout.js';
import { readLocalRecord, readRecord, type RecordRead } from './read-record.js';

/** Reads one record of a data directory (RecordRead: absent, torn or its value). */
export type RecordReader = <T>(path: string, check: (value: unknown) => T) => Promise<RecordRead<T>>;

/**
 * The way to read many records of `layout`'s data directory fastest: on a local disk
 * synchronously (readLocalRecord: a read there is answered at once, and its hand-off to
 * libuv's threads and back costs more than the read), elsewhere through readRecord, with the
 * rereads a torn read over a network mount needs; callers keep many of those in flight.
 */
export async function recordReader(layout: Layout): Promise<RecordReader> {
  if (layout.mount.native && (await fileSystemKind(layout.root)) === 'local') {
    return (path, check) => Promise.resolve(readLocalRecord(path, check));
  }
  return (path, check) => readRecord(layout.mount, path, check);
}
