import assert from 'node:assert/strict';
import { test } from 'node:test';
import { invokedAs } from '../../../src/cli/invoked-as.js';

test('the command as the user ran it', () => {
  assert.equal(invokedAs(['node', '/x/node_modules/.bin/mountcrawl'], { npm_command: 'exec' }, '/x'), 'npx mountcrawl');
  assert.equal(invokedAs(['node', '/usr/local/bin/mountcrawl'], {}, '/home/me'), 'mountcrawl');
  assert.equal(invokedAs(['node', '/src/mountcrawl/bin/mountcrawl.js'], {}, '/src/mountcrawl'), 'node bin/mountcrawl.js');
  assert.equal(invokedAs(['node', '/src/mountcrawl/bin/mountcrawl.js'], {}, '/elsewhere'), 'node /src/mountcrawl/bin/mountcrawl.js');
});
