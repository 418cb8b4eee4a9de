import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstValue, headerValue } from '../../../src/fetch/header-value.js';

test('the first value of a header: absent, once, or repeated', () => {
  assert.equal(firstValue(undefined), undefined);
  assert.equal(firstValue('a'), 'a');
  assert.equal(firstValue(['a', 'b']), 'a');
  assert.equal(headerValue({ location: ['/x', '/y'] }, 'location'), '/x');
  assert.equal(headerValue({}, 'location'), undefined);
});
