import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, runCli, spawnCli, tempDir } from '../support/cli.js';
import { listFiles } from '../support/data-files.js';
import { pageRoute, startRoutedSite } from '../support/routed-site.js';
import { until } from '../support/until.js';

async function linksCount(data: string): Promise<number> {
  return (await listFiles(data)).filter((f) => f.startsWith('links/') && !f.split('/').pop()!.startsWith('.')).length;
}

/** A loopback port that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('status says whether a crawl is running, stopped with work left, or complete', { timeout: 120_000 }, () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    site = await startGeneratedSite({ hosts: 1, pagesPerHost: 40, linksPerPage: 4, latencyMs: 30 });
    data = await tempDir();
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('running, then stopped by Ctrl-C with work left, then complete after a rerun', async () => {
    const args = ['crawl', site.url(0, '/'), '--data', data.path, '--per-host', '1', ...FAST, '--delay', '100'];
    const child = spawnCli(args);
    await until(async () => (await linksCount(data.path)) >= 3);
    const running = await runCli(['status', '--data', data.path]);
    assert.equal(running.code, 0, running.stderr);
    assert.match(running.stdout, /^crawl {5}running: 1 node/m, running.stdout);

    child.kill('SIGINT');
    const stopped = await child.done;
    assert.equal(stopped.code, 130, stopped.stderr);
    const after = await runCli(['status', '--data', data.path, '--no-wait']);
    assert.equal(after.code, 0, after.stderr);
    const m = /^crawl {5}stopped with work left \(stopped at [^)]+\): (\d+) URLs known and not fetched.*rerun the crawl to resume$/m.exec(after.stdout);
    assert.ok(m, after.stdout);
    assert.ok(Number(m[1]) > 0, after.stdout);
    const json = JSON.parse((await runCli(['status', '--data', data.path, '--no-wait', '--json'])).stdout) as { crawl: { state: string; queued: number } };
    assert.equal(json.crawl.state, 'stopped');

    const rerun = await runCli(['crawl', site.url(0, '/'), '--data', data.path, ...FAST]);
    assert.equal(rerun.code, 0, rerun.stderr);
    const done = await runCli(['status', '--data', data.path, '--no-wait']);
    assert.match(done.stdout, /^crawl {5}complete \(ended /m, done.stdout);
  });
});

describe('the end summary of a rerun counts what the data directory holds', { timeout: 60_000 }, () => {
  test('a rerun of a finished crawl with final errors says so, not "errors: none" alone', async () => {
    const site = await startRoutedSite([{ '/': pageRoute(['/a', '/gone-1', '/gone-2']), '/a': pageRoute([]) }]);
    const data = await tempDir();
    try {
      const args = ['crawl', site.url(0, '/'), '--data', data.path, ...FAST];
      const first = await runCli(args);
      assert.equal(first.code, 0, first.stderr);
      const second = await runCli(args);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stderr, /done \(complete\): 0 pages/);
      assert.match(second.stderr, /^data directory: 2 pages of 1 hosts, 2 errors \(2 final: HTTP_404 2\)$/m, second.stderr);
    } finally {
      await site.close();
      await data.cleanup();
    }
  });
});

describe('a crawl that fetched nothing', { timeout: 60_000 }, () => {
  test('every seed refused: exit 5 with NOTHING_FETCHED, before the default retry delay (30 s) would even come round', async () => {
    const data = await tempDir();
    try {
      const port = await closedPort();
      const seed = `http://127.0.0.1:${port}/`;
      // The default retry policy (no --retry-delay): a refused first contact leaves the host
      // alone at once; the 25 s limit is only a guard against the old 90 s of retrying.
      const r = await runCli(['crawl', seed, '--data', data.path, '--no-progress', '--heartbeat', '100', '--delay', '0'], { timeoutMs: 25_000 });
      assert.equal(r.signal, null, `killed: it kept retrying\n${r.stderr}`);
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /^mountcrawl: NOTHING_FETCHED: every seed failed and no page was stored \(CONNECTION_REFUSED http:\/\/127\.0\.0\.1:\d+\/: /m);
      // Not final: a later run tries the host again.
      const status = JSON.parse((await runCli(['status', '--data', data.path, '--no-wait', '--json'])).stdout) as { errors: { total: number; final: number } };
      assert.deepEqual([status.errors.total, status.errors.final], [1, 0]);
    } finally {
      await data.cleanup();
    }
  });

  test('under --processes the supervisor gives the same verdict', async () => {
    const data = await tempDir();
    try {
      const port = await closedPort();
      const r = await runCli(['crawl', `http://127.0.0.1:${port}/`, '--data', data.path, '--processes', '2', ...FAST], { timeoutMs: 40_000 });
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /NOTHING_FETCHED: every seed failed/);
    } finally {
      await data.cleanup();
    }
  });
});
