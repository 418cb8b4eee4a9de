import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seedLines, whyNotASeed } from '../../../src/cli/seeds-file.js';

describe('seeds file lines', () => {
  test('blank lines and # comments (whole-line and after a URL) are left out; a # inside a URL stays', () => {
    const text = '# my seeds\n\nhttp://h/ # note\n  http://h/a\t# tab note\r\nhttp://h/#top\n   \n  # indented comment\nhttp://h/b';
    assert.deepEqual(seedLines(text), [
      { line: 3, text: 'http://h/' },
      { line: 4, text: 'http://h/a' },
      { line: 5, text: 'http://h/#top' },
      { line: 8, text: 'http://h/b' },
    ]);
  });

  test('a seed without a scheme gets a "did you mean" hint; others do not', () => {
    assert.match(whyNotASeed('127.0.0.5:8000', 'invalid', 2048), /did you mean http:\/\/127\.0\.0\.5:8000\/\?/);
    assert.match(whyNotASeed('example.com/a', 'invalid', 2048), /did you mean http:\/\/example\.com\/a\?/);
    assert.doesNotMatch(whyNotASeed('ftp://example.com/', 'scheme', 2048), /did you mean/);
    assert.doesNotMatch(whyNotASeed('not a url', 'invalid', 2048), /did you mean/);
  });
});
