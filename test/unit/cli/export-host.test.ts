import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeHostNames, noSuchHost } from '../../../src/cli/export-command.js';

test('closeHostNames: the directory of a host typed without its port first, then near misses, at most five', () => {
  const known = ['127.0.5.1_41000', '127.0.5.2_41000', 'example.com', 'example.org', 'www.example.com', 'other.net'];
  assert.deepEqual(closeHostNames('127.0.5.1', known), ['127.0.5.1_41000']);
  assert.deepEqual(closeHostNames('exmaple.com', known), ['example.com']);
  assert.deepEqual(closeHostNames('example', known), ['example.com', 'example.org', 'www.example.com']);
  assert.deepEqual(closeHostNames('EXAMPLE.ORG', known), ['example.org']);
  assert.deepEqual(closeHostNames('nothing-like-it', known), []);
  assert.equal(
    closeHostNames(
      'a',
      Array.from({ length: 9 }, (_, i) => `a${i}`),
    ).length,
    5,
  );
});

test('noSuchHost: one line, exit 2, with the close names or a pointer to status', () => {
  const e = noSuchHost('127.0.5.1', '/data', ['127.0.5.1_41000']);
  assert.equal(e.code, 'NO_SUCH_HOST');
  assert.equal(e.exitCode, 2);
  assert.equal(e.message, 'no host directory "127.0.5.1" in /data; did you mean 127.0.5.1_41000?');
  assert.match(noSuchHost('zzz', '/data', ['example.com']).message, /`mountcrawl status` lists the hosts\)$/);
  assert.match(noSuchHost('zzz', '/data', []).message, /it holds no host yet$/);
});
