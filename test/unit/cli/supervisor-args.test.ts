import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childArgs } from '../../../src/cli/supervisor.js';

test('a child of --processes gets the command line without the supervisor-only options, with its own node id', () => {
  assert.deepEqual(
    childArgs(
      ['crawl', 'http://a/', '--processes', '2', '--metrics-port', '9464', '--metrics-host=0.0.0.0', '--node-id', 'n', '--delay', '5'],
      1,
    ),
    ['crawl', 'http://a/', '--node-id', 'n-2', '--delay', '5'],
  );
  assert.deepEqual(childArgs(['crawl', '--processes=3', '--metrics-port=1', '--metrics-host', '::1', '--node-id=x'], 0), [
    'crawl',
    '--node-id=x-1',
  ]);
});
