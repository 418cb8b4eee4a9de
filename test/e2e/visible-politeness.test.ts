import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, runCli, spawnCli, tempDir } from '../support/cli.js';
import { pageRoute, startRoutedSite, type Route } from '../support/routed-site.js';

/** FAST without --no-progress: info lines (the start line) are printed, off a terminal as plain lines. */
const TALKATIVE = FAST.filter((a) => a !== '--no-progress');

describe('politeness you can see', { timeout: 60_000 }, () => {
  let site: LoopbackSite;
  before(async () => {
    site = await startGeneratedSite({ hosts: 1, pagesPerHost: 8, linksPerPage: 3 });
  });
  after(async () => {
    await site.close();
  });

  test('the start line and the summary say the per-host delay is what limits the rate', async () => {
    const data = await tempDir();
    try {
      const r = await runCli(['crawl', site.url(0, '/'), '--data', data.path, ...TALKATIVE, '--delay', '150']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        /^mountcrawl: politeness: one request start per host every 150 ms \(--delay\), up to 2 in flight \(--per-host\): at most 6\.67 pages\/s from each host/m,
      );
      assert.match(
        r.stderr,
        /^rate limited by politeness: requests waited for the per-host delay \(--delay\) \d+ times \(--delay 0 lifts it/m,
        r.stderr,
      );
    } finally {
      await data.cleanup();
    }
  });

  test('with --delay 0 nothing claims the delay held it back', async () => {
    const data = await tempDir();
    try {
      const r = await runCli(['crawl', site.url(0, '/'), '--data', data.path, ...TALKATIVE]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /politeness: up to 2 requests in flight per host, no delay between them \(--delay 0\)/);
      assert.doesNotMatch(r.stderr, /rate limited by politeness/);
    } finally {
      await data.cleanup();
    }
  });

  test('--watch with nothing to do says it is waiting for seeds', async () => {
    const data = await tempDir();
    try {
      const node = spawnCli(['crawl', site.url(0, '/'), '--data', data.path, '--watch', ...TALKATIVE]);
      const end = Date.now() + 30_000;
      while (
        !/nothing to do: waiting for seeds \(add some with `mountcrawl seed URL --data /.test(node.stderrSoFar()) &&
        Date.now() < end
      ) {
        await new Promise((r) => setTimeout(r, 50));
      }
      node.kill('SIGTERM');
      const r = await node.done;
      assert.match(r.stderr, /nothing to do: waiting for seeds/);
    } finally {
      await data.cleanup();
    }
  });
});

describe('totals that add up under --processes', { timeout: 90_000 }, () => {
  test('the live total line counts each host once (--partition url: both nodes work on the one host)', async () => {
    let child: ReturnType<typeof spawnCli> | undefined;
    /** Batches of plain progress lines: hosts per label (node 1, node 2, total). */
    const batches = (): Map<string, number>[] => {
      const out: Map<string, number>[] = [];
      for (const line of (child?.stderrSoFar() ?? '').split('\n')) {
        const m = /^mountcrawl: (node \d|total): .*, (\d+) hosts?, /.exec(line);
        if (m === null) continue;
        if (m[1] === 'node 1' || out.length === 0) out.push(new Map());
        out.at(-1)!.set(m[1]!, Number(m[2]));
      }
      return out;
    };
    const bothOwn = (b: Map<string, number>): boolean => b.get('node 1') === 1 && b.get('node 2') === 1 && b.has('total');
    // The pages below / wait (at most 30 s) until a batch of progress lines shows both nodes
    // holding the host, so that such a batch exists however slow the machine.
    const deadline = performance.now() + 30_000;
    const held: Route = async (req, res, ctx) => {
      while (!batches().some(bothOwn) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      return pageRoute()(req, res, ctx);
    };
    const below = Array.from({ length: 12 }, (_, i) => `/p/${i}`);
    const site = await startRoutedSite([{ '/': pageRoute(below), '/p/*': held }]);
    const data = await tempDir();
    try {
      const quietless = FAST.filter((a) => a !== '--no-progress');
      child = spawnCli(['crawl', site.url(0, '/'), '--data', data.path, '--processes', '2', '--partition', 'url', ...quietless]);
      const r = await child.done;
      assert.equal(r.code, 0, r.stderr);
      const both = batches().filter(bothOwn);
      assert.ok(both.length > 0, r.stderr);
      for (const b of both) assert.equal(b.get('total'), 1, r.stderr);
      for (const b of batches()) assert.ok((b.get('total') ?? 0) <= 1, r.stderr);
    } finally {
      await site.close();
      await data.cleanup();
    }
  });

  test('--partition url: one host counted once, errors counted once per URL', async () => {
    const site = await startRoutedSite([{ '/': pageRoute(['/a', '/b', '/gone-1', '/gone-2']), '/a': pageRoute([]), '/b': pageRoute([]) }]);
    const data = await tempDir();
    try {
      const r = await runCli(['crawl', site.url(0, '/'), '--data', data.path, '--processes', '2', '--partition', 'url', ...FAST]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^mountcrawl: data directory: 3 pages of 1 host, 2 errors \(2 final: HTTP_404 2\)$/m, r.stderr);
    } finally {
      await site.close();
      await data.cleanup();
    }
  });

  test('a node that owns no host says so once, and why', async () => {
    const site = await startGeneratedSite({ hosts: 1, pagesPerHost: 6, linksPerPage: 2 });
    const data = await tempDir();
    try {
      // One host, three nodes: usually one or two own none. Which ones depends on when each started:
      // the host moves to its owner by rendezvous as nodes join, so a node may have held it for
      // a moment and handed it on, fetching something or not. Each node that fetched nothing
      // (by its own summary) is named in exactly one line saying why, and no other node is.
      const r = await runCli(['crawl', `${site.hosts[0]!.origin}/`, '--data', data.path, '--processes', '3', ...FAST]);
      assert.equal(r.code, 0, r.stderr);
      const empty = [1, 2, 3].filter((i) => new RegExp(`^\\[${i}\\] done \\(complete\\): 0 pages`, 'm').test(r.stderr));
      const why = [...r.stderr.matchAll(/^mountcrawl: ((?:node \d(?:, )?)+) fetched nothing: (.*)$/gm)];
      const named = why.flatMap((m) => m[1]!.split(', ').map((n) => Number(n.slice(5)))).sort();
      assert.deepEqual(named, empty, r.stderr);
      const none = why.filter((m) => m[2]!.startsWith('owned no host'));
      assert.ok(none.length <= 1, r.stderr);
      for (const m of none) assert.match(m[2]!, /^owned no host: rendezvous hashing gave the only host to another node/);
      assert.match(r.stderr, /data directory: 6 pages of 1 host, 0 errors/);
    } finally {
      await site.close();
      await data.cleanup();
    }
  });
});
