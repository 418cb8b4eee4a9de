import { RECORD_VERSION, type LinksRecord } from '../../src/store/records.js';

/** A links record of a page fetched whole with status 200 and no links, for tests; `extra` overrides any field. */
export function pageRecord(url: string, extra: Partial<LinksRecord> = {}): LinksRecord {
  return {
    v: RECORD_VERSION,
    url,
    finalUrl: url,
    status: 200,
    contentType: 'text/html',
    bytes: 10,
    fetchedAt: '2025-01-15T12:00:00.000Z',
    depth: 1,
    node: 'n1',
    durationMs: 5,
    html: null,
    links: [],
    ...extra,
  };
}
