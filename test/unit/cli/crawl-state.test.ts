import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeCrawlState, queuedLeft } from '../../../src/cli/crawl-state.js';
import type { RunState } from '../../../src/store/run-state.js';

const AT = '2026-11-27T10:00:00.000Z';
const none = { pending: 0, nextAt: null };

function stopped(node: string, queued: number, extra: Partial<RunState> = {}): RunState {
  return { state: 'stopped', node, at: AT, reason: 'stopped', queued, leftOnDisk: 0, ...extra };
}

describe('describeCrawlState: what every node left', () => {
  test('two nodes stopped: their queues add up (the shared run state holds only the last)', () => {
    const ends = [stopped('a', 230, { byHost: { h1: 100, h2: 130 } }), stopped('b', 115, { byHost: { h3: 115 } })];
    const c = describeCrawlState({ nodes: [], run: ends[1], ends, retries: none, pages: 10, seeds: 1 });
    assert.equal(c.state, 'stopped');
    assert.equal(c.queued, 345);
    assert.match(c.line, /^stopped with work left \(stopped at [^)]+, 2 nodes\): 345 URLs known and not fetched; rerun/);
  });

  test('a host taken over from a node that stopped earlier is counted once, as its later holder left it', () => {
    const a = stopped('a', 80, { byHost: { h1: 50, h2: 30 } });
    const b = stopped('b', 60, { byHost: { h1: 40, h3: 20 }, departed: ['a'] });
    assert.equal(queuedLeft([a, b]), 40 + 30 + 20);
    assert.equal(queuedLeft([b, a]), 40 + 30 + 20);
  });

  test("an end of an older version counts its queue; one by host counts its hosts (a host still loading is its earlier holder's)", () => {
    assert.equal(queuedLeft([stopped('a', 12), stopped('b', 10, { byHost: { h: 7 } })]), 19);
  });

  test('a node alive, unchecked (--no-wait), whose record says it crawls: running, whatever the last end says', () => {
    const c = describeCrawlState({
      nodes: [
        { alive: null, state: 'crawling' },
        { alive: false, state: 'stopping' },
      ],
      run: stopped('a', 5),
      ends: [stopped('a', 5)],
      retries: none,
      pages: 3,
      seeds: 1,
    });
    assert.equal(c.state, 'running');
    assert.equal(c.line, 'running: 1 node');
  });

  test('stopped while idle with nothing queued: nothing left to fetch, not "work left ... 0 URLs"', () => {
    const ends = [stopped('a', 0, { idle: true, byHost: { h: 0 } })];
    const c = describeCrawlState({ nodes: [], run: ends[0], ends, retries: none, pages: 3, seeds: 1 });
    assert.equal(c.state, 'stopped');
    assert.match(c.line, /^stopped with nothing left to fetch \(stopped at [^)]+\): every node was idle$/);
  });

  test('a directory of an older version (no ends): the shared run state as before', () => {
    const c = describeCrawlState({ nodes: [], run: stopped('a', 7), retries: none, pages: 3, seeds: 1 });
    assert.match(c.line, /: 7 URLs known and not fetched/);
  });
});
