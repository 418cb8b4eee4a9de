import { fileSystemKind } from './fs-kind.js';
import type { Layout } from './layout.js';
import { type Decode, readLocalRecord, readRecordBytes, type RecordRead } from './read-record.js';

/** Reads one record of a data directory (RecordRead: absent, torn or what `decode` made of its bytes, jsonRecord for its parsed value). */
export type RecordReader = <T>(path: string, decode: Decode<T>) => Promise<RecordRead<T>>;

/**
 * The way to read many records of `layout`'s data directory fastest: on a local disk
 * synchronously (readLocalRecord: a read there is answered at once, and its hand-off to
 * libuv's threads and back costs more than the read), elsewhere through readRecordBytes, with the
 * rereads a torn read over a network mount needs; callers keep many of those in flight.
 */
export async function recordReader(layout: Layout): Promise<RecordReader> {
  if (layout.mount.native && (await fileSystemKind(layout.root)) === 'local') {
    return (path, decode) => Promise.resolve(readLocalRecord(path, decode));
  }
  return (path, decode) => readRecordBytes(layout.mount, path, decode);
}
