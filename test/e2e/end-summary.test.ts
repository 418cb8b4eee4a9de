import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { holdingsLine } from '../../src/cli/run-outcome.js';
import { readHoldings, type Holdings } from '../../src/store/holdings.js';
import { Layout } from '../../src/store/layout.js';
import { FAST, jsonSummary, runCli, tempDir } from '../support/cli.js';
import { pageRoute, startRoutedSite, type Route } from '../support/routed-site.js';

const status =
  (code: number): Route =>
  (_req, res) => {
    res.statusCode = code;
    res.end();
  };

const robots: Route = (_req, res) => {
  res.setHeader('content-type', 'text/plain');
  res.end('User-agent: *\nDisallow: /private/\n');
};

// The end summary counts the errs records of the hosts the node held to the end from memory
// (CrawlNode.heldErrs) and reads only the others: it must say what a full read says.
describe('the end summary counts errs records as a full read of the data directory does', { timeout: 60_000 }, () => {
  test('final, retrying and robots-disallowed records; a first run and a rerun', async () => {
    const links = ['/a', '/gone', '/private/x', '/private/y', '/busy', '/fixed'];
    let fixedCalls = 0;
    const fixed: Route = (req, res, ctx) => {
      // Fails once, then succeeds: its errs record is replaced by a links record.
      if (fixedCalls++ === 0) return status(503)(req, res, ctx);
      return pageRoute([])(req, res, ctx);
    };
    const host = {
      '/': pageRoute(links),
      '/a': pageRoute(['/gone-too']),
      '/gone': status(404),
      '/gone-too': status(410),
      '/busy': status(503),
      '/fixed': fixed,
      '/late': pageRoute([]),
      '/robots.txt': robots,
    };
    const site = await startRoutedSite([host, { '/': pageRoute(['/missing']), '/missing': status(404), '/robots.txt': robots }]);
    const data = await tempDir();
    try {
      const args = ['crawl', site.url(0, '/'), site.url(1, '/'), '--data', data.path, '--json', '--max-attempts', '2', ...FAST];
      const expectSame = async (what: string, run: Awaited<ReturnType<typeof runCli>>, served: number): Promise<Holdings> => {
        assert.equal(run.code, 0, run.stderr);
        const summary = jsonSummary<{ requests: number; dataDirectory: { pages: number; errors: Holdings['errors'] } }>(run);
        const full = await readHoldings(new Layout(data.path), 2);
        assert.deepEqual(summary.dataDirectory, { pages: full.pages, errors: full.errors }, what);
        // The requests the site saw: robots.txt read from the data directory is none (a rerun).
        assert.equal(summary.requests, served, `${what}: requests`);
        return full;
      };
      const served = async (run: () => ReturnType<typeof runCli>) => {
        const before = site.total;
        const r = await run();
        return [r, site.total - before] as const;
      };
      const first = await expectSame('first run', ...(await served(() => runCli(args))));
      assert.equal(first.pages, 4, 'two home pages, /a and /fixed');
      assert.deepEqual(first.errors.byCode, { HTTP_404: 2, HTTP_410: 1, HTTP_503: 1, ROBOTS_DISALLOWED: 2 });
      // robots.txt exclusions are counted apart from the errors, in `status` as in the summary.
      assert.equal(first.errors.excluded, 2);
      const text = await runCli(['status', '--data', data.path, '--no-wait', '--max-attempts', '2']);
      assert.match(text.stdout, /^errors {4}4 \(4 final at --max-attempts 2\): HTTP_404 2, HTTP_410 1, HTTP_503 1$/m, text.stdout);
      assert.match(text.stdout, /^excluded {2}2 URLs disallowed by robots\.txt \(not fetched\)$/m, text.stdout);
      const json = JSON.parse((await runCli(['status', '--data', data.path, '--no-wait', '--max-attempts', '2', '--json'])).stdout) as {
        errors: Holdings['errors'];
      };
      assert.deepEqual(json.errors, first.errors, 'the JSON keeps byCode and says how many are excluded');
      // A rerun takes the hosts again: what it counts comes from their listings.
      await expectSame('rerun', ...(await served(() => runCli(args))));
      // A new seed on a host crawled before: its robots.txt is read from the data directory.
      const late = await expectSame('a new seed', ...(await served(() => runCli([...args, site.url(0, '/late')]))));
      assert.equal(late.pages, 5);
    } finally {
      await site.close();
      await data.cleanup();
    }
  });

  test('under --processes 2 the supervisor counts what its children held, and says what a full read says', async () => {
    const host = (i: number) => ({
      '/': pageRoute(['/a', `/gone-${i}`, '/private/x', '/busy']),
      '/a': pageRoute([]),
      [`/gone-${i}`]: status(404),
      '/busy': status(503),
      '/robots.txt': robots,
    });
    const site = await startRoutedSite([host(0), host(1), host(2), host(3)]);
    const data = await tempDir();
    try {
      const seeds = [0, 1, 2, 3].map((i) => site.url(i, '/'));
      const run = await runCli(['crawl', ...seeds, '--data', data.path, '--processes', '2', '--max-attempts', '2', ...FAST]);
      assert.equal(run.code, 0, run.stderr);
      const full = await readHoldings(new Layout(data.path), 2);
      assert.equal(full.pages, 8);
      assert.deepEqual(full.errors.byCode, { HTTP_404: 4, HTTP_503: 4, ROBOTS_DISALLOWED: 4 });
      assert.ok(run.stderr.split('\n').includes(`mountcrawl: ${holdingsLine(full)}`), `${holdingsLine(full)}\n${run.stderr}`);
    } finally {
      await site.close();
      await data.cleanup();
    }
  });
});
