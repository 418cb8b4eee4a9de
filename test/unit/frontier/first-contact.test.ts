import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leaveAloneAtFirstContact } from '../../../src/frontier/first-contact.js';

test('a refused first contact with a host never reached is given up at once; anything else is retried', () => {
  assert.equal(leaveAloneAtFirstContact('CONNECTION_REFUSED', 1, 0), true);
  assert.equal(leaveAloneAtFirstContact('CONNECTION_REFUSED', 2, 0), false, 'not the first contact');
  assert.equal(leaveAloneAtFirstContact('CONNECTION_REFUSED', 1, 3), false, 'the host answered in an earlier run');
  assert.equal(leaveAloneAtFirstContact('HTTP_503', 1, 0), false);
  assert.equal(leaveAloneAtFirstContact('FETCH_TIMEOUT', 1, 0), false);
});
