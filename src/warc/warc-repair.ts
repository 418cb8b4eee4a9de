import { rename, stat, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic-write.js';
import { nodeMount } from '../store/mount.js';
import { cdxjLine, sortCdxj, surtOf, type CdxEntry } from './cdxj.js';
import { WarcFileReader, httpHead } from './warc-file-reader.js';

/** Suffix of a WARC file still being written. */
export const OPEN_SUFFIX = '.open';

/** Who wrote a WARC file, from its warcinfo record. */
export interface WarcWriterInfo {
  readonly node: string;
  readonly hostname: string;
  readonly bootId: string;
  readonly pid: number;
}

/** The index name beside a WARC file: `X.warc.gz` (or `X.warc.gz.open`) has `X.cdxj`. */
export function cdxjNameOf(warcName: string): string {
  return warcName.replace(/\.open$/, '').replace(/\.warc\.gz$/, '.cdxj');
}

/** The CDX entry of a response (or revisit) record, undefined for other records. */
export function cdxEntryOf(
  rec: { offset: number; length: number; headers: ReadonlyMap<string, string>; block: Buffer },
  filename: string,
): CdxEntry | undefined {
  const type = rec.headers.get('warc-type');
  if (type !== 'response' && type !== 'revisit') return undefined;
  const { status, mime } = httpHead(rec.block);
  const url = rec.headers.get('warc-target-uri') ?? '';
  return {
    url,
    surt: surtOf(url),
    date: rec.headers.get('warc-date') ?? '',
    status,
    mime: type === 'revisit' ? 'warc/revisit' : mime,
    digest: rec.headers.get('warc-payload-digest') ?? '',
    offset: rec.offset,
    length: rec.length,
    filename,
  };
}

/** The writer named in the first record (warcinfo) of a WARC file, when it is readable. */
export async function writerOf(path: string): Promise<WarcWriterInfo | undefined> {
  const reader = new WarcFileReader(path);
  for await (const rec of reader.records()) {
    if (rec.headers.get('warc-type') !== 'warcinfo') return undefined;
    const fields = new Map<string, string>();
    for (const line of rec.block.toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) fields.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    return {
      node: fields.get('mountcrawl-node') ?? '',
      hostname: fields.get('hostname') ?? '',
      bootId: fields.get('mountcrawl-boot-id') ?? '',
      pid: Number(fields.get('mountcrawl-pid') ?? -1),
    };
  }
  return undefined;
}

/**
 * Closes a WARC file whose writer is dead (docs/warc.md), found under `name` (its `.open`
 * name, or the claim name a repairer gave it: dead-writer-repair.ts): keeps every complete
 * exchange (a response and the request record written after it), cuts the torn rest off,
 * writes its CDXJ index again, sorted, from the records themselves (so no line points past
 * the end),
 * and renames it to `finalName`. A file with not even a whole warcinfo record is removed with
 * its index. Safe to repeat: the cut and the index depend only on the bytes of the file.
 * Returns the records kept and the bytes cut off.
 */
export async function repairWarc(
  dir: string,
  name: string,
  finalName: string,
  nodeId: string,
): Promise<{ records: number; cut: number; size: number }> {
  const path = join(dir, name);
  const reader = new WarcFileReader(path);
  let lines = '';
  let records = 0;
  let end = 0;
  // A response is kept with the request record written right after it, or not at all.
  let response: { id: string; line: string } | undefined;
  for await (const rec of reader.records()) {
    const type = rec.headers.get('warc-type');
    const entry = cdxEntryOf(rec, finalName);
    if (type === 'response' || type === 'revisit') {
      response = { id: rec.headers.get('warc-record-id') ?? '', line: entry === undefined ? '' : cdxjLine(entry) };
      continue;
    }
    if (type === 'request' && response !== undefined && rec.headers.get('warc-concurrent-to') === response.id) {
      lines += response.line;
      records++;
    } else if (entry !== undefined) lines += cdxjLine(entry);
    response = undefined;
    records++;
    end = rec.offset + rec.length;
  }
  const { size } = await stat(path);
  const cdxPath = join(dir, cdxjNameOf(finalName));
  if (end === 0) {
    await unlink(cdxPath).catch(() => undefined);
    await unlink(path);
    return { records: 0, cut: size, size: 0 };
  }
  if (size > end) await truncate(path, end);
  await writeFileAtomic(nodeMount, cdxPath, sortCdxj(lines), { nodeId, fsync: true });
  await rename(path, join(dir, finalName));
  return { records, cut: Math.max(0, size - end), size: end };
}
