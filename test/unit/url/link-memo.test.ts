import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LinkMemo } from '../../../src/url/link-memo.js';

test('LinkMemo: a URL is first once, again only at a lower depth; distinct URLs stay distinct through growth', () => {
  const memo = new LinkMemo(4);
  assert.equal(memo.first('http://a.example/x', 3), true);
  assert.equal(memo.first('http://a.example/x', 3), false);
  assert.equal(memo.first('http://a.example/x', 5), false);
  assert.equal(memo.first('http://a.example/x', 2), true, 'a shallower path may pass a depth limit');
  assert.equal(memo.first('http://a.example/x', 2), false);
  // 200,000 URLs that differ in one or two characters (as links of one site do): each is new
  // once, and is known after the table grew many times.
  const urls = Array.from({ length: 200_000 }, (_, i) => `http://a.example/p/${i}`);
  for (const u of urls) assert.equal(memo.first(u, 1), true, u);
  assert.equal(memo.size, 200_001);
  for (const u of urls) assert.equal(memo.first(u, 1), false, u);
  assert.equal(memo.first('http://a.example/x', 300), false, 'depths above 253 are kept as 253');
});
