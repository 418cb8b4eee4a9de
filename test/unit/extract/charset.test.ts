import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { charsetOfContentType, completeUtf8Prefix, decodeBytes, isAsciiCompatible, sniffCharset } from '../../../src/extract/charset.js';

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1');
const bytes = (...parts: (Buffer | number[])[]): Buffer => Buffer.concat(parts.map((p) => Buffer.from(p)));

/** `日本語` in Shift_JIS (not valid UTF-8). */
const SJIS_NIHONGO = [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea];
const UTF8_BOM = [0xef, 0xbb, 0xbf];

describe('charsetOfContentType', () => {
  test('reads the charset parameter, quoted or not, in any case and spacing', () => {
    assert.equal(charsetOfContentType('text/html; charset=utf-8'), 'utf-8');
    assert.equal(charsetOfContentType('text/html;charset=Shift_JIS'), 'Shift_JIS');
    assert.equal(charsetOfContentType('text/html; Charset = "euc-jp"'), 'euc-jp');
    assert.equal(charsetOfContentType('text/html; charset=utf-8; foo=bar'), 'utf-8');
  });

  test('no header or no parameter gives undefined', () => {
    assert.equal(charsetOfContentType('text/html'), undefined);
    assert.equal(charsetOfContentType(''), undefined);
    assert.equal(charsetOfContentType(null), undefined);
    assert.equal(charsetOfContentType(undefined), undefined);
  });
});

describe('sniffCharset: what is declared', () => {
  test('a UTF-8 byte order mark wins over the header', () => {
    const body = bytes(UTF8_BOM, latin1('<p>x'));
    assert.equal(sniffCharset(body, 'text/html; charset=windows-1252', false), 'UTF-8');
  });

  test('a UTF-16 byte order mark wins over the header', () => {
    const le = bytes([0xff, 0xfe], Buffer.from('<p>hi', 'utf16le'));
    assert.equal(sniffCharset(le, 'text/html; charset=utf-8', false), 'UTF-16LE');
    const be = bytes([0xfe, 0xff], Buffer.from('<p>hi', 'utf16le').swap16());
    assert.equal(sniffCharset(be, undefined, false), 'UTF-16BE');
  });

  test('the Content-Type charset is used, as a WHATWG name', () => {
    assert.equal(sniffCharset(bytes(SJIS_NIHONGO), 'text/html;charset=shift_jis', false), 'Shift_JIS');
    assert.equal(sniffCharset(utf8('<p>x'), 'text/html; charset="Shift_JIS"', false), 'Shift_JIS');
    // ISO-8859-1 and latin1 are labels of windows-1252 in the WHATWG Encoding Standard.
    assert.equal(sniffCharset(latin1('<p>caf\xe9'), 'text/html; charset=ISO-8859-1', false), 'windows-1252');
    assert.equal(sniffCharset(latin1('<p>caf\xe9'), 'text/html; charset=latin1', false), 'windows-1252');
  });

  test('the header wins over a meta tag', () => {
    const body = latin1('<meta charset="utf-8"><p>caf\xe9');
    assert.equal(sniffCharset(body, 'text/html; charset=ISO-8859-1', false), 'windows-1252');
  });

  test('<meta charset> is used when the header has none', () => {
    assert.equal(sniffCharset(latin1('<meta charset="euc-jp"><p>'), 'text/html', false), 'EUC-JP');
    assert.equal(sniffCharset(latin1('<META CHARSET=Shift_JIS>'), null, false), 'Shift_JIS');
  });

  test('<meta http-equiv="Content-Type" content="...; charset="> is used', () => {
    const body = latin1('<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">');
    assert.equal(sniffCharset(body, null, false), 'KOI8-R');
  });

  test('a meta tag past the first 4 KiB is not looked for', () => {
    const body = latin1(`${' '.repeat(5000)}<meta charset=koi8-r>`);
    assert.equal(sniffCharset(body, null, false), 'UTF-8');
  });

  test('<meta charset=utf-16> in an ASCII page means UTF-8 (the bytes cannot be UTF-16)', () => {
    assert.equal(sniffCharset(latin1('<meta charset="utf-16"><p>x'), null, false), 'UTF-8');
  });
});

describe('sniffCharset: repairs for pages that declare nothing or lie', () => {
  test('nothing declared, valid UTF-8 (or plain ASCII): UTF-8', () => {
    assert.equal(sniffCharset(utf8('<p>café 日本'), 'text/html', false), 'UTF-8');
    assert.equal(sniffCharset(utf8('<p>cafe'), 'text/html', false), 'UTF-8');
    assert.equal(sniffCharset(new Uint8Array(0), null, false), 'UTF-8');
  });

  test('nothing declared, invalid UTF-8: windows-1252', () => {
    assert.equal(sniffCharset(latin1('<p>caf\xe9'), 'text/html', false), 'windows-1252');
    assert.equal(sniffCharset(bytes(SJIS_NIHONGO), null, false), 'windows-1252');
  });

  test('header says UTF-8 but the bytes are Shift_JIS with a meta tag: the meta tag wins', () => {
    const body = bytes(latin1('<meta charset=Shift_JIS><p>'), SJIS_NIHONGO);
    assert.equal(sniffCharset(body, 'text/html; charset=UTF-8', false), 'Shift_JIS');
  });

  test('header says UTF-8, bytes are not UTF-8, no meta tag: windows-1252', () => {
    assert.equal(sniffCharset(latin1('<p>caf\xe9'), 'text/html; charset=UTF-8', false), 'windows-1252');
  });

  test('header and meta say UTF-8, bytes are not UTF-8: windows-1252', () => {
    const body = latin1('<meta charset=utf-8><p>caf\xe9');
    assert.equal(sniffCharset(body, 'text/html; charset=UTF-8', false), 'windows-1252');
  });

  test('header says UTF-8 and the bytes are UTF-8: a contrary meta tag is ignored', () => {
    const body = utf8('<meta charset=Shift_JIS><p>日本');
    assert.equal(sniffCharset(body, 'text/html; charset=utf-8', false), 'UTF-8');
  });

  test('a body truncated inside a multibyte character still counts as UTF-8', () => {
    const cut = utf8('<p>日本').subarray(0, -1); // the last character loses its last byte
    assert.equal(sniffCharset(cut, 'text/html', true), 'UTF-8');
    assert.equal(sniffCharset(cut, 'text/html; charset=utf-8', true), 'UTF-8');
    // The same bytes in a body that was NOT truncated are not UTF-8.
    assert.equal(sniffCharset(cut, 'text/html', false), 'windows-1252');
  });

  test('truncation does not excuse invalid bytes before the cut', () => {
    const body = bytes(latin1('<p>caf\xe9 '), utf8('日本').subarray(0, 4));
    assert.equal(sniffCharset(body, 'text/html', true), 'windows-1252');
  });
});

describe('completeUtf8Prefix', () => {
  const word = utf8('a日'); // 61 e6 97 a5
  const emoji = utf8('a\u{1F600}'); // 61 f0 9f 98 80

  test('a complete sequence is kept whole', () => {
    assert.equal(completeUtf8Prefix(word).length, 4);
    assert.equal(completeUtf8Prefix(emoji).length, 5);
    assert.equal(completeUtf8Prefix(utf8('abc')).length, 3);
    assert.equal(completeUtf8Prefix(new Uint8Array(0)).length, 0);
  });

  test('a sequence cut at its end is dropped', () => {
    assert.equal(completeUtf8Prefix(word.subarray(0, 3)).length, 1);
    assert.equal(completeUtf8Prefix(word.subarray(0, 2)).length, 1);
    assert.equal(completeUtf8Prefix(emoji.subarray(0, 4)).length, 1);
    assert.equal(completeUtf8Prefix(emoji.subarray(0, 2)).length, 1);
  });
});

describe('isAsciiCompatible', () => {
  test('UTF-16 and ISO-2022 are not; the usual single- and multi-byte encodings are', () => {
    for (const e of ['UTF-8', 'windows-1252', 'Shift_JIS', 'EUC-JP', 'GBK', 'Big5', 'KOI8-R']) assert.ok(isAsciiCompatible(e), e);
    for (const e of ['UTF-16LE', 'UTF-16BE', 'ISO-2022-JP', 'replacement']) assert.ok(!isAsciiCompatible(e), e);
  });
});

describe('decodeBytes', () => {
  test('decodes in the given encoding', () => {
    assert.equal(decodeBytes(Uint8Array.from(SJIS_NIHONGO), 'Shift_JIS'), '日本語');
    assert.equal(decodeBytes(utf8('café'), 'UTF-8'), 'café');
    assert.equal(decodeBytes(Buffer.from('ü', 'utf16le'), 'UTF-16LE'), 'ü');
  });

  test('windows-1252 maps 0x80-0x9F to the WHATWG table, not to C1 controls', () => {
    assert.equal(decodeBytes(Uint8Array.from([0x80, 0x93, 0x94, 0x99, 0x9f, 0xe9]), 'windows-1252'), '€“”™Ÿé');
    // The five bytes the table leaves undefined decode to the code point of the same number.
    assert.equal(decodeBytes(Uint8Array.from([0x81, 0x8d, 0x8f, 0x90, 0x9d]), 'windows-1252'), '\x81\x8d\x8f\x90\x9d');
  });

  test('an unknown encoding name falls back to UTF-8', () => {
    assert.equal(decodeBytes(utf8('日本'), 'no-such-encoding'), '日本');
  });
});
