import { basename, dirname } from 'node:path';
import type { DirHandles } from './dir-handles.js';
import { fileSystemKind } from './fs-kind.js';
import type { Layout } from './layout.js';
import { type Decode, readLocalRecord, readRecordBytes, type RecordRead } from './read-record.js';

/** Reads one record of a data directory (RecordRead: absent, torn or what `decode` made of its bytes, jsonRecord for its parsed value). */
export type RecordReader = <T>(path: string, decode: Decode<T>) => Promise<RecordRead<T>>;

/**
 * The way to read many records of `layout`'s data directory fastest: on a local disk
 * synchronously (readLocalRecord: a read there is answered at once, and its hand-off to
 * libuv's threads and back costs more than the read), elsewhere through readRecordBytes, with the
 * rereads a torn read over a network mount needs; callers keep many of those in flight. With
 * `dirs` (DirHandles of a network mount) a record is read through its open directory: the
 * kernel then looks up only its name, not every directory of its path again (docs/protocol.md,
 * "Round trips on a network mount"); over sshfs 6 SFTP requests a record instead of 9.
 */
export async function recordReader(layout: Layout, dirs?: DirHandles): Promise<RecordReader> {
  if (layout.mount.native && (await fileSystemKind(layout.root)) === 'local') {
    return (path, decode) => Promise.resolve(readLocalRecord(path, decode));
  }
  if (dirs === undefined) return (path, decode) => readRecordBytes(layout.mount, path, decode);
  return (path, decode) =>
    dirs.use(dirname(path), (via) => readRecordBytes(layout.mount, via === undefined ? path : `${via}/${basename(path)}`, decode));
}
