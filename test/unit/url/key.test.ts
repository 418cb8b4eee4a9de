import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKey, KEY_LENGTH, urlKey } from '../../../src/url/key.js';

test('the key is the lowercase hex SHA-224 of the URL (fixed vectors)', () => {
  // sha224("http://example.com/") computed independently with `printf %s URL | sha224sum`
  assert.equal(urlKey('http://example.com/'), '599370d5687c3fd078c314add6d37c2d714e57a5d9157d4a703cfcc0');
  assert.equal(urlKey('http://example.com/').length, 56);
  assert.ok(isKey(urlKey('https://a.b/c?d')));
  assert.ok(!isKey('A1F9'));
});

/** Normalized URLs and their keys, each from `printf %s URL | sha224sum`. */
const VECTORS: readonly (readonly [string, string])[] = [
  ['http://example.com/', '599370d5687c3fd078c314add6d37c2d714e57a5d9157d4a703cfcc0'],
  ['https://xn--mnchen-3ya.de/stra%C3%9Fe?q=%2F', '116fb8a6360934408a9ef85c725c7ddba137e571ecb444c53c2fb3ac'],
  ['http://example.com:8080/a%20b?x=1&y=2', '2da7674b3d66429ec5ca116b32095200398d9978606ef3441b0e4ddc'],
  ['http://[::1]:8080/x', '9a551fc21626b5f5249e9d528df7ccfb1529e56c52b1e0255ca45caa'],
  ['https://example.com/%E6%97%A5%E6%9C%AC.html', '379d889c517687a945bbd8f4dfaa03be4e8a9086781d1d5d74f9b157'],
];

test('keys of normalized URLs (fixed vectors)', () => {
  for (const [url, key] of VECTORS) assert.equal(urlKey(url), key, url);
});

test('the key hashes the string exactly: one changed byte gives another key', () => {
  // The key does not normalize: callers pass normalizeUrl's output.
  assert.notEqual(urlKey('http://example.com/'), urlKey('http://example.com'));
  assert.notEqual(urlKey('http://example.com/%2F'), urlKey('http://example.com/%2f'));
});

test('a key is 56 lowercase hex characters', () => {
  assert.equal(KEY_LENGTH, 56);
  for (const [, key] of VECTORS) assert.ok(isKey(key), key);
  assert.ok(!isKey(VECTORS[0]![1].toUpperCase()), 'uppercase hex is not a key');
  assert.ok(!isKey(VECTORS[0]![1].slice(1)), '55 characters');
  assert.ok(!isKey(`${VECTORS[0]![1]}0`), '57 characters');
  assert.ok(!isKey(`${VECTORS[0]![1].slice(1)}g`), 'not hex');
  assert.ok(!isKey(`${VECTORS[0]![1]}.json`), 'a file name, not a key');
  assert.ok(!isKey(''));
});
