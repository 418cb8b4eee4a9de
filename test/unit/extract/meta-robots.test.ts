import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRobotsContent, parseXRobotsTag } from '../../../src/extract/meta-robots.js';

test('robots directives from meta content and X-Robots-Tag', () => {
  assert.deepEqual(parseRobotsContent('index, follow'), { nofollow: false, noindex: false });
  assert.deepEqual(parseRobotsContent('NONE'), { nofollow: true, noindex: true });
  assert.deepEqual(parseXRobotsTag('noindex'), { nofollow: false, noindex: true });
  assert.deepEqual(parseXRobotsTag(['nofollow', 'otherbot: noindex']), { nofollow: true, noindex: false });
  assert.deepEqual(parseXRobotsTag('unavailable_after: 25 Jun 2030 15:00:00 PST'), { nofollow: false, noindex: false });
  assert.deepEqual(parseXRobotsTag(undefined), { nofollow: false, noindex: false });
});
