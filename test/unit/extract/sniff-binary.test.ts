import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { looksBinary } from '../../../src/extract/sniff-binary.js';

/** A signature followed by some harmless ASCII, as a real file would continue. */
const file = (signature: number[], rest = 'ABCDEFGHIJ'): Buffer => Buffer.concat([Buffer.from(signature), Buffer.from(rest, 'latin1')]);

describe('looksBinary: binary bodies served as HTML', () => {
  const signatures: readonly (readonly [string, number[]])[] = [
    ['PNG', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
    ['GIF87a', [...Buffer.from('GIF87a')]],
    ['GIF89a', [...Buffer.from('GIF89a')]],
    ['JPEG', [0xff, 0xd8, 0xff, 0xe0]],
    ['PDF', [...Buffer.from('%PDF-1.7')]],
    ['ZIP', [0x50, 0x4b, 0x03, 0x04]],
    ['gzip not declared as Content-Encoding', [0x1f, 0x8b, 0x08]],
    ['RIFF (WebP)', [...Buffer.from('RIFF')]],
    ['ELF', [0x7f, 0x45, 0x4c, 0x46]],
    ['ICO', [0x00, 0x00, 0x01, 0x00]],
  ];
  for (const [name, sig] of signatures) {
    test(`${name} signature`, () => {
      assert.equal(looksBinary(file(sig)), true);
    });
  }

  test('a NUL byte in the first 1 KiB', () => {
    assert.equal(looksBinary(Buffer.from('<html>\0<body>')), true);
    const nulAtEnd = Buffer.alloc(1024, 0x61);
    nulAtEnd[1023] = 0;
    assert.equal(looksBinary(nulAtEnd), true);
  });
});

describe('looksBinary: text', () => {
  test('normal HTML is not binary', () => {
    assert.equal(looksBinary(Buffer.from('<!DOCTYPE html><html><body><a href="/">x</a></body></html>')), false);
    assert.equal(looksBinary(Buffer.from('<p>日本語 café</p>')), false);
    assert.equal(looksBinary(Buffer.from([0xef, 0xbb, 0xbf, 0x3c, 0x70, 0x3e])), false, 'UTF-8 BOM');
  });

  test('UTF-16 with a byte order mark is not binary despite its NUL bytes', () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<html><a href="/">x</a>', 'utf16le')]);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('<html><a href="/">x</a>', 'utf16le').swap16()]);
    assert.ok(le.includes(0) && be.includes(0));
    assert.equal(looksBinary(le), false);
    assert.equal(looksBinary(be), false);
  });

  test('a NUL byte after the first 1 KiB is not looked at', () => {
    const body = Buffer.alloc(2048, 0x61);
    body[1024] = 0;
    assert.equal(looksBinary(body), false);
  });

  test('a signature counts only at the very start', () => {
    assert.equal(looksBinary(Buffer.from(' %PDF-1.7')), false);
    assert.equal(looksBinary(Buffer.from('<p>GIF89a</p>')), false);
  });

  test('an empty or very short body is not binary', () => {
    assert.equal(looksBinary(new Uint8Array(0)), false);
    assert.equal(looksBinary(Buffer.from([0x89, 0x50])), false, 'half a PNG signature');
  });
});
