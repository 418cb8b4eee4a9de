import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { ErrsRecord, LinksRecord } from '../../src/store/records.js';
import { FAST, runCli, tempDir, type CliResult } from '../support/cli.js';
import { filesOf, readJson } from '../support/data-files.js';
import { gaps, pageRoute, startRoutedSite, statusRoute } from '../support/routed-site.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('retries of failed fetches', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let run: CliResult;
  /** The errs record of /flaky.html as it was on disk when its third request came. */
  let errsWhileFailing: ErrsRecord | undefined;

  before(async () => {
    data = await tempDir();
    site = await startRoutedSite([
      // 0: fails twice with 500, then works.
      {
        '/': pageRoute(['/flaky.html']),
        '/flaky.html': (req, res, ctx) => {
          if (ctx.n <= 2) return statusRoute(500)(req, res, ctx);
          const errs = join(data.path, filesOf(site.url(0, '/flaky.html')).errs);
          errsWhileFailing = JSON.parse(readFileSync(errs, 'utf8')) as ErrsRecord;
          return pageRoute(['/after-flaky.html'])(req, res, ctx);
        },
        '/after-flaky.html': pageRoute(),
      },
      // 1: final failures.
      { '/': pageRoute(['/gone.html', '/gone410.html']), '/gone410.html': statusRoute(410) },
      // 2: always 503, no Retry-After.
      { '/': pageRoute(['/down.html']), '/down.html': statusRoute(503) },
    ]);
    run = await runCli(['crawl', ...site.hosts.map((h) => `${h.origin}/`), '--data', data.path, ...FAST, '--max-attempts', '3'], {
      timeoutMs: 20_000,
    });
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('the crawl completes', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /done \(complete\)/);
  });

  test('a page that fails twice with 500 and then works ends stored, its errs record gone', async () => {
    const f = filesOf(site.url(0, '/flaky.html'));
    assert.equal(site.count(site.url(0, '/flaky.html')), 3);
    const rec = await readJson<LinksRecord>(data.path, f.links);
    assert.equal(rec.status, 200);
    assert.deepEqual(rec.links, [site.url(0, '/after-flaky.html')]);
    assert.ok(!existsSync(join(data.path, f.errs)), 'errs record left behind');
    assert.equal(site.count(site.url(0, '/after-flaky.html')), 1, 'its links are followed');
  });

  test('while it failed, its errs record said attempts, lastAt and nextAttemptAt', () => {
    assert.ok(errsWhileFailing, 'no errs record on disk at the third request');
    const e = errsWhileFailing;
    assert.equal(e.code, 'HTTP_500');
    assert.equal(e.status, 500);
    assert.equal(e.final, false);
    assert.equal(e.attempts, 2);
    assert.match(e.firstAt, ISO);
    assert.match(e.lastAt, ISO);
    assert.match(String(e.nextAttemptAt), ISO);
    assert.ok(e.firstAt < e.lastAt, 'firstAt is the first failure, lastAt the second');
    assert.ok(Date.parse(e.nextAttemptAt!) >= Date.parse(e.lastAt) + 400, 'second wait: --retry-delay 0.2 doubled');
  });

  test('attempts back off: --retry-delay, then twice that', () => {
    const g = gaps(site.times.get(site.url(0, '/flaky.html'))!);
    assert.ok(g[0]! >= 200, `first wait ${g[0]!.toFixed(0)} ms`);
    assert.ok(g[1]! >= 400, `second wait ${g[1]!.toFixed(0)} ms`);
  });

  test('404 and 410 are fetched once and final', async () => {
    for (const [path, code] of [
      ['/gone.html', 'HTTP_404'],
      ['/gone410.html', 'HTTP_410'],
    ] as const) {
      assert.equal(site.count(site.url(1, path)), 1, path);
      const e = await readJson<ErrsRecord>(data.path, filesOf(site.url(1, path)).errs);
      assert.equal(e.code, code);
      assert.equal(e.final, true);
      assert.equal(e.attempts, 1);
      assert.equal(e.nextAttemptAt, null);
    }
  });

  test('a page that keeps failing is tried --max-attempts times, then its errs record is final', async () => {
    assert.equal(site.count(site.url(2, '/down.html')), 3);
    const e = await readJson<ErrsRecord>(data.path, filesOf(site.url(2, '/down.html')).errs);
    assert.equal(e.code, 'HTTP_503');
    assert.equal(e.final, true);
    assert.equal(e.attempts, 3);
    assert.equal(e.nextAttemptAt, null);
    assert.ok(!existsSync(join(data.path, filesOf(site.url(2, '/down.html')).links)));
  });

  test('the summary counts every failed attempt by code', () => {
    assert.match(run.stderr, /^errors: .*HTTP_503 3/m);
    assert.match(run.stderr, /^errors: .*HTTP_500 2/m);
    assert.match(run.stderr, /^errors: .*HTTP_404 1/m);
  });

  test('status --json counts the errors left, by code', async () => {
    const r = await runCli(['status', '--data', data.path, '--json', '--no-wait']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { pages: number; errors: { total: number; final: number; byCode: Record<string, number> } };
    assert.deepEqual(report.errors, { total: 3, final: 3, byCode: { HTTP_404: 1, HTTP_410: 1, HTTP_503: 1 }, excluded: 0 });
    assert.equal(report.pages, 5, 'the three home pages, /flaky.html and /after-flaky.html');
  });

  test('a second run requests none of the final failures again', { timeout: 20_000 }, async () => {
    const before = site.total;
    const again = await runCli(['crawl', ...site.hosts.map((h) => `${h.origin}/`), '--data', data.path, ...FAST], { timeoutMs: 15_000 });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(site.total, before);
  });
});

describe('a transient failure left from an earlier run', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    data = await tempDir();
    site = await startRoutedSite([
      { '/': pageRoute(['/later.html']), '/later.html': (req, res, ctx) => (ctx.n === 1 ? statusRoute(500) : pageRoute())(req, res, ctx) },
    ]);
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('with --max-attempts 1 it is final at once; a run with more attempts leaves it alone', { timeout: 20_000 }, async () => {
    const args = ['crawl', site.url(0, '/'), '--data', data.path, ...FAST];
    const first = await runCli([...args, '--max-attempts', '1'], { timeoutMs: 15_000 });
    assert.equal(first.code, 0, first.stderr);
    const e = await readJson<ErrsRecord>(data.path, filesOf(site.url(0, '/later.html')).errs);
    assert.equal(e.final, true);
    assert.equal(e.attempts, 1);
    const second = await runCli([...args, '--max-attempts', '3'], { timeoutMs: 15_000 });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(site.count(site.url(0, '/later.html')), 1, 'a final errs record is done');
  });
});

// A record written under one --max-attempts and read under another: the crawler and `status`
// judge it by the same rule (src/frontier/retry-policy.ts isFinal), with the same limit.
describe('an errs record not final, after --max-attempts was lowered to its attempts', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    data = await tempDir();
    site = await startRoutedSite([{ '/': pageRoute(['/down.html']), '/down.html': statusRoute(503) }]);
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('the crawler leaves it alone, status and report count it final; a higher limit tries it again', { timeout: 40_000 }, async () => {
    const args = ['crawl', site.url(0, '/'), '--data', data.path, ...FAST];
    const down = filesOf(site.url(0, '/down.html'));
    assert.equal((await runCli([...args, '--max-attempts', '1'], { timeoutMs: 15_000 })).code, 0);
    // As a run with --max-attempts 3 stopped after two attempts would have left it.
    const e = await readJson<ErrsRecord>(data.path, down.errs);
    writeFileSync(join(data.path, down.errs), JSON.stringify({ ...e, final: false, attempts: 2, nextAttemptAt: e.lastAt }));
    const status = async (...extra: string[]) => {
      const r = await runCli(['status', '--data', data.path, '--json', '--no-wait', ...extra]);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as { errors: { final: number }; maxAttempts: { value: number; from: string } };
    };

    const lowered = await runCli([...args, '--max-attempts', '2'], { timeoutMs: 15_000 });
    assert.equal(lowered.code, 0, lowered.stderr);
    assert.equal(site.count(site.url(0, '/down.html')), 1, 'at its limit: not requested');
    assert.match(lowered.stderr, /1 error \(1 final: HTTP_503 1\)/, lowered.stderr);
    const after2 = await status();
    assert.deepEqual([after2.errors.final, after2.maxAttempts], [1, { value: 2, from: 'last run' }]);
    assert.equal((await status('--max-attempts', '3')).errors.final, 0, 'one attempt left under 3');
    const report = await runCli(['report', '--data', data.path, '--json']);
    assert.equal(report.code, 0, report.stderr);
    assert.equal((JSON.parse(report.stdout) as { totals: { errorsFinal: number } }).totals.errorsFinal, 1, 'report counts as status');

    const raised = await runCli([...args, '--max-attempts', '3'], { timeoutMs: 15_000 });
    assert.equal(raised.code, 0, raised.stderr);
    assert.equal(site.count(site.url(0, '/down.html')), 2, 'its third attempt');
    assert.equal((await readJson<ErrsRecord>(data.path, down.errs)).attempts, 3);
    assert.equal((await status()).errors.final, 1);
  });
});
