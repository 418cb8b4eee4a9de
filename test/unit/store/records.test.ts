import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  asErrsRecord,
  asLinksRecord,
  RECORD_VERSION,
  serializeRecord,
  type ErrsRecord,
  type LinksRecord,
} from '../../../src/store/records.js';

const LINKS: LinksRecord = {
  v: RECORD_VERSION,
  url: 'http://example.org/',
  finalUrl: 'http://example.org/',
  status: 200,
  contentType: 'text/html; charset=utf-8',
  bytes: 1234,
  fetchedAt: '2025-01-15T12:00:00.000Z',
  depth: 0,
  node: 'ws1-100',
  durationMs: 42,
  html: 'html/example.org/0123.html',
  links: ['http://example.org/a', 'http://example.org/b'],
};

const ERRS: ErrsRecord = {
  v: RECORD_VERSION,
  url: 'http://example.org/x',
  code: 'HTTP_503',
  message: 'HTTP 503',
  status: 503,
  final: false,
  attempts: 2,
  firstAt: '2025-01-15T12:00:00.000Z',
  lastAt: '2025-01-15T12:05:00.000Z',
  nextAttemptAt: '2025-01-15T12:10:00.000Z',
  depth: 3,
  node: 'ws1-100',
};

const without = <T extends object>(o: T, key: keyof T): unknown => {
  const copy = { ...o } as Record<string, unknown>;
  delete copy[key as string];
  return copy;
};

describe('records', () => {
  test('the record format version is 1', () => {
    assert.equal(RECORD_VERSION, 1);
  });

  test('asLinksRecord accepts a links record and returns it', () => {
    assert.equal(asLinksRecord(LINKS), LINKS);
    assert.deepEqual(asLinksRecord(JSON.parse(serializeRecord(LINKS))), LINKS);
  });

  test('asLinksRecord rejects what readers cannot use', () => {
    for (const bad of [
      null,
      42,
      'text',
      [],
      without(LINKS, 'url'),
      without(LINKS, 'depth'),
      without(LINKS, 'links'),
      { ...LINKS, url: 1 },
      { ...LINKS, depth: '1' },
      { ...LINKS, links: 'http://example.org/' },
    ]) {
      assert.throws(() => asLinksRecord(bad), TypeError, JSON.stringify(bad));
    }
  });

  test('asErrsRecord accepts an errs record and rejects what readers cannot use', () => {
    assert.equal(asErrsRecord(ERRS), ERRS);
    for (const bad of [
      null,
      {},
      without(ERRS, 'url'),
      without(ERRS, 'code'),
      without(ERRS, 'final'),
      without(ERRS, 'attempts'),
      { ...ERRS, final: 'false' },
      { ...ERRS, attempts: '2' },
      LINKS,
    ]) {
      assert.throws(() => asErrsRecord(bad), TypeError, JSON.stringify(bad));
    }
  });

  test('serializeRecord: JSON that parses back equal, one field and one link per line, ending in a newline', () => {
    const text = serializeRecord(LINKS);
    assert.ok(text.endsWith('}\n'));
    assert.deepEqual(JSON.parse(text), LINKS);
    const lines = text.split('\n');
    assert.ok(lines.includes(' "url": "http://example.org/",'), text);
    assert.ok(lines.includes('  "http://example.org/a",'), text);
    assert.ok(lines.includes('  "http://example.org/b"'), text);
    assert.deepEqual(JSON.parse(serializeRecord(ERRS)), ERRS);
  });
});
