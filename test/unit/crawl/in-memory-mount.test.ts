import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CrawlNode, type RunResult } from '../../../src/crawl/crawl-node.js';
import { ExitCode } from '../../../src/errors.js';
import { silentLogger } from '../../../src/progress/logger.js';
import { Layout } from '../../../src/store/layout.js';
import { tempOwner } from '../../../src/store/temp-names.js';
import { asLinksRecord } from '../../../src/store/records.js';
import { hostDirOfNormalized } from '../../../src/url/host-dir.js';
import { urlKey } from '../../../src/url/key.js';
import { FakeClock } from '../../support/fake-clock.js';
import { type Answer, fakeFetcher } from '../../support/fake-fetcher.js';
import { frontierConfig } from '../../support/frontier-rig.js';
import { hookFs, hookFsPromises } from '../../support/fs-hook.js';
import { MemoryFs } from '../../support/memory-fs.js';

/** Not on the real disk: a call of the node's that went to node's fs would fail. */
const DATA_DIR = '/nonexistent/mountcrawl-sim';
const HOSTS = ['a.test', 'b.test', 'c.test', 'd.test'];

/** Four pages a host, linked within the host and across hosts: every page is reached from the seeds. */
function site(): { pages: string[]; answers: Record<string, Answer> } {
  const page = (links: string[]): Answer => [200, {}, `<html><body>${links.map((l) => `<a href="${l}">x</a>`).join('')}</body></html>`];
  const answers: Record<string, Answer> = {};
  HOSTS.forEach((host, i) => {
    const next = HOSTS[(i + 1) % HOSTS.length]!;
    answers[`http://${host}/`] = page(['/p1', '/p2', `http://${next}/`]);
    answers[`http://${host}/p1`] = page(['/p3', `http://${next}/p2`]);
    answers[`http://${host}/p2`] = page(['/']);
    answers[`http://${host}/p3`] = page([`http://${next}/p3`, '/p1']);
  });
  return { pages: Object.keys(answers), answers };
}

/** Three nodes of one process on one MemoryFs and one fake clock, run until each ends. */
async function crawlOnce(): Promise<{
  fs: MemoryFs;
  nodes: CrawlNode[];
  results: (RunResult | undefined)[];
  asked: string[];
  steps: number;
}> {
  const clock = new FakeClock();
  const fs = new MemoryFs(() => clock.now());
  const { fetcher, asked } = fakeFetcher(site().answers);
  let seed = 1;
  // A seeded random source (the nodes' lease tokens and the marker's id).
  const random = (): number => {
    seed = (seed * 48_271) % 2_147_483_647;
    return seed / 2_147_483_647;
  };
  const nodes = ['n1', 'n2', 'n3'].map(
    (nodeId) =>
      new CrawlNode(
        frontierConfig({
          dataDir: DATA_DIR,
          nodeId,
          seedUrls: HOSTS.map((h) => `http://${h}/`),
          robots: true,
          heartbeatMs: 1_000,
          deadAfterMs: 15_000,
          startPeers: 2,
        }),
        { clock, logger: silentLogger, fs, fetcher, random },
      ),
  );
  const results: (RunResult | undefined)[] = nodes.map(() => undefined);
  const runs = nodes.map((node, i) => node.run().then((r) => (results[i] = r)));
  // No real I/O: a turn of the event loop settles every promise; then the clock moves on.
  let steps = 0;
  for (; results.includes(undefined) && steps < 20_000; steps++) {
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(50);
  }
  if (!results.includes(undefined)) await Promise.all(runs);
  return { fs, nodes, results, asked, steps };
}

/** Every file of a MemoryFs and its bytes. */
async function contents(fs: MemoryFs): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const path of fs.files()) out.set(path, (await fs.readFile(path)).toString('utf8'));
  return out;
}

/** Node's fs functions (both APIs) that a node could call on the data directory. */
const FS_CALLS = [
  'open',
  'readFile',
  'writeFile',
  'readdir',
  'opendir',
  'stat',
  'lstat',
  'unlink',
  'rename',
  'link',
  'mkdir',
  'rmdir',
  'statfs',
];

/** Runs `body` while every call of node's fs on a path under DATA_DIR is recorded; returns the calls. */
async function realCallsDuring(body: () => Promise<void>): Promise<string[]> {
  const calls: string[] = [];
  const watch =
    (name: string) =>
    (original: (...args: unknown[]) => unknown) =>
    (...args: unknown[]) => {
      if (args.some((a) => typeof a === 'string' && a.startsWith(DATA_DIR))) calls.push(`${name} ${String(args[0])}`);
      return original(...args);
    };
  const restores = FS_CALLS.flatMap((name) => [hookFs(name, watch(name)), hookFsPromises(name, watch(name))]);
  try {
    await body();
  } finally {
    for (const restore of restores) restore();
  }
  return calls;
}

describe('CrawlNodes on an in-memory mount', { timeout: 120_000 }, () => {
  test('three nodes of one process, one MemoryFs and one fake clock crawl a site of four hosts to its end: every page has its links record, no temporary file is left', async () => {
    const { pages } = site();
    let run: Awaited<ReturnType<typeof crawlOnce>> | undefined;
    const realCalls = await realCallsDuring(async () => {
      run = await crawlOnce();
    });
    const { fs, nodes, results, asked } = run!;
    assert.deepEqual(realCalls, [], 'no call of the real file system on the data directory');
    assert.ok(!results.includes(undefined), `nodes still running: ${nodes.map((n) => n.stats.state).join(', ')}`);
    for (const r of results) assert.deepEqual(r, { reason: 'complete', exitCode: ExitCode.OK });
    assert.equal(existsSync('/nonexistent'), false, 'nothing was made on the real disk');

    const layout = new Layout(DATA_DIR);
    for (const url of pages) {
      const path = layout.links(hostDirOfNormalized(url)!, urlKey(url));
      assert.ok(fs.exists(path), `no links record for ${url}`);
      assert.equal(asLinksRecord(JSON.parse((await fs.readFile(path)).toString('utf8'))).url, url);
    }
    assert.equal(fs.files((p) => p.startsWith(`${layout.dir('links')}/`)).length, pages.length, 'one links record a page');
    assert.deepEqual(
      fs.files((p) => tempOwner(p.slice(p.lastIndexOf('/') + 1)) !== undefined),
      [],
      'no temporary file left',
    );
    assert.deepEqual(
      fs.files((p) => p.startsWith(`${layout.dir('hosts')}/`)),
      [],
      'every lease released',
    );
    for (const url of pages) assert.ok(asked.includes(url), `${url} was not fetched`);
    assert.equal(
      nodes.reduce((n, node) => n + node.stats.pages, 0),
      pages.length,
      'each page fetched once',
    );
    assert.ok(nodes.filter((n) => n.stats.pages > 0).length >= 2, 'the work was shared');
    assert.ok((fs.calls.get('link') ?? 0) > 0 && (fs.calls.get('rename') ?? 0) > 0, 'leases and records went through the MemoryFs');
  });

  test('the same run twice (same clock, same random source): the same requests in the same order and the same files, byte for byte', async () => {
    const first = await crawlOnce();
    const second = await crawlOnce();
    assert.equal(second.steps, first.steps);
    assert.deepEqual(second.asked, first.asked);
    assert.deepEqual(
      second.nodes.map((n) => n.stats.pages),
      first.nodes.map((n) => n.stats.pages),
    );
    assert.deepEqual(await contents(second.fs), await contents(first.fs));
  });
});
