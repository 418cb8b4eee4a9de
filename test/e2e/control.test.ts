import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { runCli, spawnCli, tempDir } from '../support/cli.js';
import { until } from '../support/until.js';

/** Fast heartbeats and retries (test/support/cli.ts FAST without its --delay). */
const QUICK = ['--heartbeat', '100', '--dead-after', '15000', '--retry-delay', '0.2', '--no-progress'];

/** A node's record as it is now, or undefined when it has none. */
function record(data: string, id: string): { state: string; pages: number; inFlight: number } | undefined {
  try {
    return JSON.parse(readFileSync(join(data, 'nodes', `${id}.json`), 'utf8'));
  } catch {
    return undefined; // none, or replaced as it was read
  }
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('stop, pause, resume and drain, given from another process to three nodes on one directory', { timeout: 180_000 }, () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let seeds: string[];

  before(async () => {
    site = await startGeneratedSite({ hosts: 4, pagesPerHost: 80, linksPerPage: 4, latencyMs: 5 });
    seeds = site.hosts.map((h) => `${h.origin}/`);
  });
  after(() => site.close());
  beforeEach(async () => {
    data = await tempDir();
  });
  afterEach(() => data.cleanup());

  test('pause with a node down; it comes back paused; resume; drain one node; stop the rest; a crawl started after the stop runs to the end', async () => {
    const crawl = (id: string, extra: string[] = []) =>
      spawnCli(['crawl', ...seeds, '--data', data.path, '--node-id', id, '--delay', '200', '--concurrency', '4', ...QUICK, ...extra]);
    const ctl = (...args: string[]) => runCli([...args, '--data', data.path]);
    const a = crawl('a');
    await until(() => record(data.path, 'a') !== undefined);
    const b = crawl('b');
    let c = crawl('c');
    await until(() => ['a', 'b', 'c'].every((id) => (record(data.path, id)?.pages ?? 0) > 0));

    // c is down when the pause is given.
    c.kill('SIGTERM');
    assert.equal((await c.done).code, 143);
    const paused = await ctl('pause');
    assert.equal(paused.code, 0, paused.stderr);
    assert.match(
      paused.stdout,
      /^paused: 2 running nodes send no request from their next heartbeat; nodes started while paused start paused; mountcrawl resume to go on\n$/,
    );
    // Requests in flight when the pause was read finish (docs/operations.md), however long that
    // takes on a loaded machine: counted once each node's record says paused with none in flight.
    await until(() =>
      ['a', 'b'].every((id) => {
        const r = record(data.path, id);
        return r?.state === 'paused' && r.inFlight === 0;
      }),
    );
    const requests = site.total;
    c = crawl('c');
    await until(() => record(data.path, 'c')?.state === 'paused');
    assert.match(c.stderrSoFar(), /the crawl is paused \(by .+ at .+\): no request until mountcrawl resume/);
    await pause(1_500);
    assert.equal(site.total, requests, 'no request while paused, from the two nodes or the one started meanwhile');
    const status = await ctl('status', '--no-wait');
    assert.match(status.stdout, /^control {3}paused since .+ \(by .+\): mountcrawl resume to go on$/m);
    for (const id of ['a', 'b', 'c']) assert.match(status.stdout, new RegExp(`^  ${id} +alive\\? paused `, 'm'));
    const watch = spawnCli(['status', '--watch', '--data', data.path]);
    let seen = '';
    watch.stdout!.on('data', (d: Buffer) => (seen += d.toString()));
    await until(() => /^c +paused /m.test(seen));
    watch.kill('SIGTERM');
    assert.equal((await watch.done).code, 0);
    assert.match(seen, /^paused since .+ \(by .+\): mountcrawl resume to go on$/m);
    assert.match(seen, /^a +paused /m);

    const resumed = await ctl('resume');
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /^resumed: 3 running nodes go on within a heartbeat\n$/);
    await until(() => site.total > requests + 10);

    // Bad input: one line, exit 2.
    const unknown = await ctl('drain', 'nope');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^mountcrawl: UNKNOWN_NODE: no node nope in .+ \(its nodes: a, b, c\)\n$/);
    const drained = await ctl('drain', 'b');
    assert.equal(drained.code, 0, drained.stderr);
    assert.match(
      drained.stdout,
      /^drain b: it stops within a heartbeat, after its requests in flight, and exits 0; 2 other nodes take its hosts\n$/,
    );
    const rb = await b.done;
    assert.equal(rb.code, 0, rb.stderr);
    assert.match(rb.stderr, /drained \(by .+\): stopping after the requests in flight; the other nodes take its hosts/);
    const pagesOf = (id: string) => record(data.path, id)?.pages ?? 0;
    const before = pagesOf('a') + pagesOf('c');
    await until(() => pagesOf('a') + pagesOf('c') > before + 10);
    assert.ok(record(data.path, 'a') !== undefined && record(data.path, 'c') !== undefined, 'a and c crawl on');

    const stopped = await ctl('stop');
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(
      stopped.stdout,
      /^stop: 2 running nodes stop within a heartbeat, after their requests in flight, and exit 0; mountcrawl crawl resumes\n$/,
    );
    for (const r of await Promise.all([a.done, c.done])) {
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /mountcrawl stop \(by .+\): stopping after the requests in flight/);
    }
    const after = await ctl('status');
    assert.match(after.stdout, /^crawl {5}stopped with work left /m);

    // The next crawl is not stopped by the stop given before it, and runs to the end.
    const next = await runCli(['crawl', '--data', data.path, '--node-id', 'd', '--delay', '0', ...QUICK], { timeoutMs: 120_000 });
    assert.equal(next.code, 0, next.stderr);
    const done = await ctl('status');
    assert.match(done.stdout, /^crawl {5}complete /m);
    assert.match(done.stdout, new RegExp(`^pages {5}${4 * 80} done`, 'm'));
  });
});
