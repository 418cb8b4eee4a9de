import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, killLeft, runCli, spawnCli, tempDir } from '../support/cli.js';
import { filesOf, listFiles } from '../support/data-files.js';
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
    const m = /^crawl {5}stopped with work left \(stopped at [^)]+\): (\d+) URLs known and not fetched.*rerun the crawl to resume$/m.exec(
      after.stdout,
    );
    assert.ok(m, after.stdout);
    assert.ok(Number(m[1]) > 0, after.stdout);
    const json = JSON.parse((await runCli(['status', '--data', data.path, '--no-wait', '--json'])).stdout) as {
      crawl: { state: string; queued: number };
    };
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
      assert.match(second.stderr, /^data directory: 2 pages of 1 host, 2 errors \(2 final: HTTP_404 2\)$/m, second.stderr);
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
      const r = await runCli(['crawl', seed, '--data', data.path, '--no-progress', '--heartbeat', '100', '--delay', '0'], {
        timeoutMs: 25_000,
      });
      assert.equal(r.signal, null, `killed: it kept retrying\n${r.stderr}`);
      assert.equal(r.code, 5, r.stderr);
      assert.match(
        r.stderr,
        /^mountcrawl: NOTHING_FETCHED: every seed failed and no page was stored \(CONNECTION_REFUSED http:\/\/127\.0\.0\.1:\d+\/: /m,
      );
      // Not final: a later run tries the host again.
      const status = JSON.parse((await runCli(['status', '--data', data.path, '--no-wait', '--json'])).stdout) as {
        errors: { total: number; final: number };
      };
      assert.deepEqual([status.errors.total, status.errors.final], [1, 0]);
    } finally {
      await data.cleanup();
    }
  });

  test('under --processes the supervisor gives the same verdict', async () => {
    const data = await tempDir();
    try {
      const port = await closedPort();
      const r = await runCli(['crawl', `http://127.0.0.1:${port}/`, '--data', data.path, '--processes', '2', ...FAST], {
        timeoutMs: 40_000,
      });
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /NOTHING_FETCHED: every seed failed/);
    } finally {
      await data.cleanup();
    }
  });
});

describe('status counts what every node left when several were stopped mid-crawl', { timeout: 120_000 }, () => {
  const HOSTS = 6;
  const PAGES = 30;
  /** Each host's home page links to all its pages: once every home page is stored, every page is known. */
  const routes = Array.from({ length: HOSTS }, () => {
    const paths = Array.from({ length: PAGES }, (_, i) => `/p${i}`);
    return Object.fromEntries([['/', pageRoute(paths)], ...paths.map((p) => [p, pageRoute([])])]);
  });
  const SITE_PAGES = HOSTS * (PAGES + 1);
  /**
   * A host's pages take at least PAGES s at this delay: the tests stop the crawl mid-way after a
   * few status reads, which on a loaded machine took over the 6 s a delay of 200 ms gave.
   */
  const SLOW = ['--delay', '1000'];

  async function homesStored(data: string, site: LoopbackSite): Promise<boolean> {
    const files = await listFiles(data);
    return site.hosts.every((h) => files.includes(filesOf(`${h.origin}/`).links));
  }

  async function stoppedStatus(data: string): Promise<{ state: string; queued: number; leftOnDisk: number; line: string }> {
    const r = await runCli(['status', '--data', data, '--no-wait', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { crawl: { state: string; queued: number; leftOnDisk: number; line: string } }).crawl;
  }

  test('two crawl processes on one directory: running while one is alive; then what both left, against the site', async () => {
    const site = await startRoutedSite(routes);
    const data = await tempDir();
    let a: ReturnType<typeof spawnCli> | undefined;
    let b: ReturnType<typeof spawnCli> | undefined;
    try {
      const args = ['crawl', ...site.hosts.map((h) => `${h.origin}/`), '--data', data.path, '--per-host', '1', ...FAST, ...SLOW];
      a = spawnCli(args);
      b = spawnCli(args);
      await until(() => homesStored(data.path, site));
      a.kill('SIGINT');
      const ra = await a.done;
      assert.equal(ra.code, 130, ra.stderr);
      const oneLeft = await runCli(['status', '--data', data.path, '--no-wait']);
      assert.match(oneLeft.stdout, /^crawl {5}running: 1 node/m, oneLeft.stdout);
      // The other took the stopped node's hosts over and queued their pages (its record says
      // so): what the first one left is now the second one's, and must not count twice.
      await until(async () => {
        const r = await runCli(['status', '--data', data.path, '--no-wait', '--json']);
        const n = (JSON.parse(r.stdout) as { nodes: { hostsOwned: number; queued: number; inFlight: number }[] }).nodes;
        return n.length === 1 && n[0]!.hostsOwned === HOSTS && n[0]!.queued + n[0]!.inFlight + (await linksCount(data.path)) >= SITE_PAGES;
      });
      b.kill('SIGINT');
      const rb = await b.done;
      assert.equal(rb.code, 130, rb.stderr);
      const stored = await linksCount(data.path);
      assert.ok(stored < SITE_PAGES, `stopped mid-crawl: ${stored} of ${SITE_PAGES}`);
      const crawl = await stoppedStatus(data.path);
      assert.equal(crawl.state, 'stopped', crawl.line);
      assert.equal(crawl.queued + crawl.leftOnDisk, SITE_PAGES - stored, crawl.line);
      assert.match(crawl.line, new RegExp(`: ${SITE_PAGES - stored} URLs known and not fetched`), crawl.line);
    } finally {
      await killLeft(a, b);
      await site.close();
      await data.cleanup();
    }
  });

  test('--processes 2 stopped by SIGINT: status counts what both nodes left, against the site', async () => {
    const site = await startRoutedSite(routes);
    const data = await tempDir();
    let sup: ReturnType<typeof spawnCli> | undefined;
    try {
      sup = spawnCli([
        'crawl',
        ...site.hosts.map((h) => `${h.origin}/`),
        '--data',
        data.path,
        '--processes',
        '2',
        '--per-host',
        '1',
        ...FAST,
        ...SLOW,
      ]);
      await until(() => homesStored(data.path, site));
      // Both nodes have their hosts' pages queued (their records say so): every page is known to one.
      await until(async () => {
        const r = await runCli(['status', '--data', data.path, '--no-wait', '--json']);
        const n = (JSON.parse(r.stdout) as { nodes: { hostsOwned: number; queued: number; inFlight: number }[] }).nodes;
        const sum = (f: (x: (typeof n)[number]) => number): number => n.reduce((a, x) => a + f(x), 0);
        return (
          n.length === 2 &&
          sum((x) => x.hostsOwned) === HOSTS &&
          sum((x) => x.queued + x.inFlight) + (await linksCount(data.path)) >= SITE_PAGES
        );
      });
      sup.kill('SIGINT');
      const r = await sup.done;
      assert.equal(r.code, 130, r.stderr);
      const stored = await linksCount(data.path);
      assert.ok(stored < SITE_PAGES, `stopped mid-crawl: ${stored} of ${SITE_PAGES}`);
      const crawl = await stoppedStatus(data.path);
      assert.equal(crawl.state, 'stopped', crawl.line);
      assert.equal(crawl.queued + crawl.leftOnDisk, SITE_PAGES - stored, crawl.line);
    } finally {
      await killLeft(sup);
      await site.close();
      await data.cleanup();
    }
  });

  test('Ctrl-C of an idle --watch: stopped with nothing left to fetch, not "work left ... 0 URLs"', async () => {
    const site = await startRoutedSite([{ '/': pageRoute(['/a']), '/a': pageRoute([]) }]);
    const data = await tempDir();
    try {
      const w = spawnCli(['crawl', site.url(0, '/'), '--data', data.path, '--watch', ...FAST]);
      const idle = async (): Promise<boolean> => {
        const r = await runCli(['status', '--data', data.path, '--no-wait', '--json']);
        const s = JSON.parse(r.stdout) as { pages: number; nodes: { state: string }[] };
        return s.pages === 2 && s.nodes.length === 1 && s.nodes[0]!.state === 'idle';
      };
      await until(idle);
      w.kill('SIGINT');
      assert.equal((await w.done).code, 130);
      const crawl = await stoppedStatus(data.path);
      assert.equal(crawl.state, 'stopped', crawl.line);
      assert.match(crawl.line, /^stopped with nothing left to fetch \(stopped at [^)]+\): every node was idle$/, crawl.line);
    } finally {
      await site.close();
      await data.cleanup();
    }
  });
});
