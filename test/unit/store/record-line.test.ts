import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recordLine, recordLineInto } from '../../../src/store/record-line.js';
import { asErrsRecord, asLinksRecord, ERRS_SHAPE, LINKS_SHAPE, type RecordShape, serializeRecord } from '../../../src/store/records.js';
import { pageRecord } from '../../support/links-records.js';

/** What export printed before recordLine: the record parsed, checked and printed, or undefined when that throws (torn). */
function parsedAndPrinted(bytes: Buffer, check: (v: unknown) => unknown): string | undefined {
  try {
    return `${JSON.stringify(check(JSON.parse(bytes.toString('utf8'))))}\n`;
  } catch {
    return undefined;
  }
}

const RECORDS = [
  pageRecord('http://a.test/'),
  pageRecord('http://a.test/p?q="x"\\y', { links: ['http://a.test/é', 'http://b.test/日本', 'http://c.test/\u2028'], depth: 0 }),
  pageRecord('http://a.test/r', {
    status: 301,
    truncated: true,
    charset: 'utf-8',
    redirects: [{ url: 'http://a.test/r', status: 301, location: '/s' }],
    data: { title: 'tab\there\nline "quoted" back\\slash', n: -12, empty: {}, none: [], deep: [[{ a: null, b: false }]] },
    history: [{ at: '2025-01-15T12:00:00.000Z', status: 200, changed: true, bytes: 0 }],
    robots: ['nofollow'],
  }),
];

const ERRS = {
  v: 1,
  url: 'http://a.test/x',
  code: 'HTTP_STATUS',
  message: 'status 500',
  status: 500,
  final: false,
  attempts: 2,
  firstAt: '2025-01-15T12:00:00.000Z',
  lastAt: '2025-01-15T12:00:01.000Z',
  nextAttemptAt: null,
  depth: 3,
  node: 'n1',
  referrer: { url: 'http://a.test/', depth: 2 },
};

/** recordLine is never wrong: a line it makes is the parsed-and-printed one. */
function assertNeverWrong(bytes: Buffer, shape: RecordShape, check: (v: unknown) => unknown): void {
  const line = recordLine(bytes, shape);
  if (line !== undefined) assert.equal(line.toString('utf8'), parsedAndPrinted(bytes, check), bytes.toString('utf8'));
}

describe('recordLine', () => {
  test('a record as serializeRecord writes it: the line JSON.parse then JSON.stringify gives, as bytes', () => {
    for (const record of RECORDS) {
      const bytes = Buffer.from(serializeRecord(record));
      assert.equal(recordLine(bytes, LINKS_SHAPE)?.toString('utf8'), parsedAndPrinted(bytes, asLinksRecord));
    }
    const errs = Buffer.from(serializeRecord(ERRS));
    assert.equal(recordLine(errs, ERRS_SHAPE)?.toString('utf8'), `${JSON.stringify(ERRS)}\n`);
    // Already one line (and with \r\n, tabs): the same.
    const oneLine = Buffer.from(`\t${JSON.stringify(RECORDS[1])}\r\n`);
    assert.equal(recordLine(oneLine, LINKS_SHAPE)?.toString('utf8'), `${JSON.stringify(RECORDS[1])}\n`);
  });

  test('torn: every prefix of a record, and trailing bytes, give no line (the caller parses, which finds it torn)', () => {
    const text = serializeRecord(RECORDS[2]!);
    for (let cut = 0; cut < text.length - 1; cut++) {
      assert.equal(recordLine(Buffer.from(text.slice(0, cut)), LINKS_SHAPE), undefined, `cut at ${cut}`);
    }
    assert.equal(recordLine(Buffer.from(`${text}{}`), LINKS_SHAPE), undefined);
    assert.equal(recordLine(Buffer.from(`${text}${text}`), LINKS_SHAPE), undefined);
  });

  test('not a record of its shape, or not JSON: no line', () => {
    const cases = [
      '',
      '[]',
      '"x"',
      '{"url":"http://a.test/","depth":1}',
      '{"url":"http://a.test/","depth":"1","links":[]}',
      '{"url":"http://a.test/","depth":1,"links":{}}',
      '{"url" "http://a.test/","depth":1,"links":[]}',
      '{"url":"http://a.test/","depth":1,"links":[],}',
      '{"url":"http://a.test/","depth":1,"links":[,]}',
      '{"url":"http://a.test/","depth":1,"links":["a" "b"]}',
      '{"url":"http://a.test/","depth":1,"links":[}',
      '{"url":"http://a.test/","depth":1,"links":[]]',
      '{"url":"http://a.test/","depth":01,"links":[]}',
      '{"url":"http://a.test/","depth":1,"links":[tru]}',
      '{"url":"http://a.test/","depth":1,"links":[nul]}',
      '{"url":"http://a.test/\n","depth":1,"links":[]}',
      '{"url":"http://a.test/\\x","depth":1,"links":[]}',
      '{"url":"http://a.test/","depth":1,"links":[],"data":{"a" 1}}',
      '\uFEFF{"url":"http://a.test/","depth":1,"links":[]}',
    ];
    for (const text of cases) assert.equal(recordLine(Buffer.from(text), LINKS_SHAPE), undefined, text);
  });

  test('what JSON.stringify would print otherwise gives no line: the caller parses and prints it', () => {
    const cases = [
      '{"url":"http://a.test/\\u00e9","depth":1,"links":[]}',
      '{"url":"http:\\/\\/a.test/","depth":1,"links":[]}',
      '{"url":"http://a.test/","depth":1.0,"links":[]}',
      '{"url":"http://a.test/","depth":1e0,"links":[]}',
      '{"url":"http://a.test/","depth":-0,"links":[]}',
      '{"url":"http://a.test/","depth":1234567890123456,"links":[]}',
      '{"url":"http://a.test/","depth":1,"links":[],"depth":2}',
      '{"url":"http://a.test/","depth":1,"links":[],"data":{"b":1,"2":3}}',
      '{"url":"http://a.test/","depth":1,"links":[],"data":{"k":1,"k":2}}',
    ];
    for (const text of cases) {
      const bytes = Buffer.from(text);
      assert.equal(recordLine(bytes, LINKS_SHAPE), undefined, text);
      assert.notEqual(parsedAndPrinted(bytes, asLinksRecord), undefined, text);
    }
    const latin1 = Buffer.from('{"url":"http://a.test/\xe9","depth":1,"links":[]}', 'latin1');
    assert.equal(recordLine(latin1, LINKS_SHAPE), undefined);
  });

  test('any byte of a record changed, cut or doubled: a line is made only when it is the parsed-and-printed one', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const alphabet = Buffer.from(' \n\t"\\{}[]:,-0123456789.eE+tfnrlusa/\u00e9');
    for (const record of [...RECORDS, ERRS]) {
      const shape = 'code' in record ? ERRS_SHAPE : LINKS_SHAPE;
      const check = 'code' in record ? asErrsRecord : asLinksRecord;
      const whole = Buffer.from(serializeRecord(record));
      for (let n = 0; n < 3000; n++) {
        const at = random(whole.length);
        const bytes = Buffer.from(whole);
        const how = random(3);
        const changed =
          how === 0
            ? (bytes.fill(alphabet[random(alphabet.length)]!, at, at + 1), bytes)
            : how === 1
              ? Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)])
              : Buffer.concat([bytes.subarray(0, at + 1), bytes.subarray(at)]);
        assertNeverWrong(changed, shape, check);
      }
    }
  });

  test('recordLineInto: lines one after another in one buffer, each as recordLine makes it; -1 when it makes none', () => {
    const records = [...RECORDS.map((r) => Buffer.from(serializeRecord(r))), Buffer.from('{"url":"torn')];
    const out = Buffer.alloc(records.reduce((n, b) => n + b.length + 1, 0));
    let at = 0;
    const made: Buffer[] = [];
    for (const bytes of records) {
      const end = recordLineInto(bytes, LINKS_SHAPE, out, at);
      const line = recordLine(bytes, LINKS_SHAPE);
      if (line === undefined) {
        assert.equal(end, -1);
        continue;
      }
      assert.ok(end - at <= bytes.length + 1);
      made.push(line);
      at = end;
    }
    assert.equal(made.length, RECORDS.length);
    assert.equal(out.subarray(0, at).toString('utf8'), Buffer.concat(made).toString('utf8'));
  });
});
