import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKey, urlKey } from '../../src/url/key.js';

test('the key is the lowercase hex SHA-224 of the URL (fixed vectors)', () => {
  // sha224("http://example.com/") computed independently with `printf %s URL | sha224sum`
  assert.equal(urlKey('http://example.com/'), '599370d5687c3fd078c314add6d37c2d714e57a5d9157d4a703cfcc0');
  assert.equal(urlKey('http://example.com/').length, 56);
  assert.ok(isKey(urlKey('https://a.b/c?d')));
  assert.ok(!isKey('A1F9'));
});
