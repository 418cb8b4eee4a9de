import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Properties } from '../../../src/sim/properties.js';
import type { SimSite } from '../../../src/sim/sim-site.js';

const KEY_A = 'a'.repeat(56);
const KEY_B = 'b'.repeat(56);
/** A site with nothing to reach: only the mount's files are judged. */
const NO_SITE = { seeds: [], pages: new Map() } as unknown as SimSite;

function file(path: string, value: unknown): { path: string; data: Buffer } {
  return { path, data: Buffer.from(JSON.stringify(value)) };
}

function judged(files: { path: string; data: Buffer }[]): string[] {
  const props = new Properties({ perHost: 1, deadAfterMs: 2000, fastestRate: 1 });
  props.checkMount(files, NO_SITE, new Set());
  return props.violations;
}

describe('the simulator judges host summaries on the mount', () => {
  const record = file(`links/h.example/${KEY_A}.json`, { url: 'http://h.example/', finalUrl: 'http://h.example/', status: 200 });

  test('a summary that names only pages with links records passes', () => {
    const summary = file('summaries/h.example.json', { v: 1, host: 'h.example', pages: [[KEY_A, 'http://h.example/', 0]], links: [] });
    assert.deepEqual(judged([record, summary]), []);
  });

  test('a summary that names a page without its record, or does not parse whole, is a violation', () => {
    const ahead = file('summaries/h.example.json', {
      v: 1,
      host: 'h.example',
      pages: [
        [KEY_A, 'http://h.example/', 0],
        [KEY_B, 'http://h.example/b', 1],
      ],
      links: [],
    });
    assert.deepEqual(judged([record, ahead]), [`summaries/h.example.json names 1 pages with no links record, e.g. ${KEY_B}`]);
    const torn = { path: 'summaries/h.example.json', data: Buffer.from('{"v":1,"host":"h.ex') };
    assert.match(judged([record, torn])[0]!, /^record not whole: summaries\/h\.example\.json/);
  });
});
