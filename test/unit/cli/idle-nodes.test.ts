import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { idleNodesLines } from '../../../src/cli/idle-nodes.js';

const owned = (most: number, handedOn = 0) => ({ most, handedOn });

describe('idleNodesLines: why nodes of --processes fetched nothing', () => {
  test('every node owned hosts and fetched nothing on a directory with pages: the crawl was already complete', () => {
    const idle = [0, 1, 2].map((index) => ({ index, owned: owned(2 + (index % 2)) }));
    assert.deepEqual(idleNodesLines(idle, { nodes: 3, pages: 360, hosts: 8 }), [
      'nothing left to fetch: the crawl was already complete (360 pages in the data directory); no node fetched anything',
    ]);
  });

  test('a node that owned no host says so; one whose hosts had nothing left says that', () => {
    const lines = idleNodesLines(
      [
        { index: 0, owned: owned(0) },
        { index: 2, owned: owned(1) },
      ],
      { nodes: 3, pages: 6, hosts: 1 },
    );
    assert.deepEqual(lines, [
      'node 3 fetched nothing: nothing left to fetch on the hosts it owned',
      "node 1 fetched nothing: owned no host: rendezvous hashing gave the only host to another node (one node per host; --partition url shares one host's pages between nodes)",
    ]);
  });

  test('a node whose host passed to a node that joined later is not said to have had nothing left', () => {
    const lines = idleNodesLines(
      [
        { index: 0, owned: owned(0) },
        { index: 2, owned: owned(1, 1) },
      ],
      { nodes: 3, pages: 6, hosts: 1 },
    );
    assert.equal(lines.length, 2);
    assert.equal(
      lines[0],
      'node 3 fetched nothing: the hosts it owned passed to other nodes before it fetched (rendezvous hashing moves a host to a node that joins; one node per host)',
    );
    assert.match(lines[1]!, /^node 1 fetched nothing: owned no host/);
  });

  test('a node that did not say what it owned is not said to own none', () => {
    assert.deepEqual(idleNodesLines([{ index: 1, owned: undefined }], { nodes: 2, pages: 5, hosts: 2 }), ['node 2 fetched nothing']);
  });

  test('every node owned no host (an empty directory): no "already complete"', () => {
    const lines = idleNodesLines([{ index: 0, owned: owned(0) }], { nodes: 1, pages: 0, hosts: 0 });
    assert.match(lines[0]!, /^node 1 fetched nothing: owned no host/);
  });
});
