import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeySet } from '../../../src/url/key-set.js';
import { hashString } from '../../../src/util/string-hash.js';

test('hashString: the same string and seed give the same unsigned 32-bit number; seeds give different functions', () => {
  const url = 'http://example.com/a/b?c=d';
  assert.equal(hashString(url, 1), hashString(`http://example.com/a/b?c=${'d'}`, 1));
  assert.ok(Number.isInteger(hashString(url, 1)) && hashString(url, 1) >= 0 && hashString(url, 1) < 2 ** 32);
  assert.notEqual(hashString(url, 1), hashString(url, 2));
  assert.notEqual(hashString('', 1), hashString('', 2));
});

test('hashString: two seeds as a 64-bit fingerprint count 300,000 near-identical URLs as distinct', () => {
  const set = new KeySet();
  for (let i = 0; i < 300_000; i++) {
    const url = `http://site${i % 100}.example/articles/${i % 97}/story-${i}.html`;
    assert.ok(set.addFingerprint(hashString(url, 1), hashString(url, 2)));
  }
  assert.equal(set.size, 300_000);
  assert.equal(
    set.addFingerprint(
      hashString('http://site7.example/articles/7/story-7.html', 1),
      hashString('http://site7.example/articles/7/story-7.html', 2),
    ),
    false,
  );
});
