import { open } from 'node:fs/promises';

/**
 * The WARC file a node writes (WarcCapture, docs/warc.md) and its index: the ends this writer
 * knows of (it writes at offsets, never appends) and what a failed write left to cut off.
 */
export interface OpenFile {
  readonly name: string;
  readonly path: string;
  readonly cdxPath: string;
  size: number;
  cdxSize: number;
  records: number;
  /** A write failed after `size`: the bytes past it are cut off before the next write. */
  dirty: boolean;
  cdxDirty: boolean;
  /** Index lines of records written whose lines are not yet. */
  cdxPending: string;
}

/**
 * Writes `data` at the end this writer knows of, cutting off what a failed write left (the
 * file's `dirty` or `cdxDirty`), and moves that end past it; `fsync`: fdatasync a WARC write.
 */
export async function writeAt(path: string, data: Buffer, f: OpenFile, which: 'warc' | 'cdx', fsync: boolean): Promise<void> {
  const at = which === 'warc' ? f.size : f.cdxSize;
  const wasDirty = which === 'warc' ? f.dirty : f.cdxDirty;
  if (which === 'warc') f.dirty = true;
  else f.cdxDirty = true;
  const fh = await open(path, 'r+');
  try {
    if (wasDirty) await fh.truncate(at);
    for (let done = 0; done < data.length; ) {
      const { bytesWritten } = await fh.write(data, done, data.length - done, at + done);
      done += bytesWritten;
    }
    if (fsync && which === 'warc') await fh.datasync();
  } finally {
    await fh.close();
  }
  if (which === 'warc') {
    f.size += data.length;
    f.dirty = false;
  } else {
    f.cdxSize += data.length;
    f.cdxDirty = false;
  }
}
