import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hasRepeatedSegment, urlShape } from '../../../src/frontier/traps.js';

describe('hasRepeatedSegment', () => {
  test('a segment occurring max times marks a trap; max - 1 times does not', () => {
    assert.equal(hasRepeatedSegment('http://example.com/a/b/a/b/a/b/', 3), true);
    assert.equal(hasRepeatedSegment('http://example.com/a/b/a/b/', 3), false);
    assert.equal(hasRepeatedSegment('http://example.com/a/b/a/b/', 2), true);
  });

  test('repeats need not be adjacent, and different segments count apart', () => {
    assert.equal(hasRepeatedSegment('http://example.com/x/a/y/a/z/a', 3), true);
    assert.equal(hasRepeatedSegment('http://example.com/a/b/c/d/e/f/g', 2), false);
  });

  test('empty segments (double slashes, trailing slash) do not count', () => {
    assert.equal(hasRepeatedSegment('http://example.com//////', 2), false);
    assert.equal(hasRepeatedSegment('http://example.com/a//a/', 3), false);
  });

  test('the host is not a segment', () => {
    assert.equal(hasRepeatedSegment('http://a/a/a', 3), false);
    assert.equal(hasRepeatedSegment('http://a/a/a/a', 3), true);
  });

  test('the query is not part of the path', () => {
    assert.equal(hasRepeatedSegment('http://example.com/a/a?next=/a/a/a', 3), false);
    assert.equal(hasRepeatedSegment('http://example.com/?p=/x/x/x/x', 2), false);
  });

  test('an infinite limit turns the rule off', () => {
    assert.equal(hasRepeatedSegment('http://example.com/a/a/a/a/a/a/a/a', Infinity), false);
  });

  test('a URL with no path', () => {
    assert.equal(hasRepeatedSegment('http://example.com', 2), false);
  });
});

describe('urlShape', () => {
  test('digit runs in the path become 0', () => {
    assert.equal(urlShape('http://example.com/cal/2024/01'), '/cal/0/0');
    assert.equal(urlShape('http://example.com/page123/item-45.html'), '/page0/item-0.html');
  });

  test('the query keeps only parameter names, digits folded too', () => {
    assert.equal(urlShape('http://example.com/cal/2024/01?day=3'), '/cal/0/0?day');
    assert.equal(urlShape('http://example.com/s?q=shoes&page=2&f1=x'), '/s?q&page&f0');
  });

  test('a generated calendar has one shape', () => {
    const a = urlShape('http://example.com/cal/2024/01?day=3');
    const b = urlShape('http://example.com/cal/1999/12?day=17');
    assert.equal(a, b);
  });

  test('different parameter names are different shapes', () => {
    assert.notEqual(urlShape('http://example.com/s?q=1'), urlShape('http://example.com/s?page=1'));
  });

  test('the host is not part of the shape; an empty path is /', () => {
    assert.equal(urlShape('http://host1.example.com/a'), urlShape('http://host2.example.com/a'));
    assert.equal(urlShape('http://example.com'), '/');
    assert.equal(urlShape('http://example.com:8080/x1'), '/x0');
  });
});
