import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { runCli, spawnCli } from '../support/cli.js';
import { startSshfsPair, type SshfsPair } from '../support/sshfs-pair.js';
import { until } from '../support/until.js';

const QUICK = ['--heartbeat', '100', '--dead-after', '15000', '--retry-delay', '0.2', '--no-progress'];

/** The state a node's record says, read through a mount (undefined: none, or replaced as it was read). */
function state(dir: string, id: string): string | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, 'nodes', `${id}.json`), 'utf8')).state;
  } catch {
    return undefined;
  }
}

/** The control commands over two sshfs mounts of one export: two "machines" with separate caches. */
describe('stop, pause, resume and drain on two sshfs mounts of one export', { timeout: 180_000 }, () => {
  let site: LoopbackSite;
  let pair: SshfsPair | { skip: string };
  before(async () => {
    site = await startGeneratedSite({ hosts: 4, pagesPerHost: 80, linksPerPage: 4, latencyMs: 5 });
    pair = await startSshfsPair(2);
  });
  after(async () => {
    await site.close();
    if (!('skip' in pair)) await pair.stop();
  });

  test('a node on each mount; pause and resume from one, drain the other node from it, stop from the other mount', async (t) => {
    if ('skip' in pair) return t.skip(`sshfs unavailable: ${pair.skip}`);
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const data = (i: number): string => join((pair as SshfsPair).mounts[i]!, 'ctl');
    const nodes = [0, 1].map((i) =>
      spawnCli(['crawl', ...seeds, '--data', data(i), '--node-id', `m${i}`, '--delay', '200', '--concurrency', '4', ...QUICK]),
    );
    await until(() => state(data(1), 'm0') === 'crawling' && state(data(0), 'm1') === 'crawling');

    const paused = await runCli(['pause', '--data', data(1)]);
    assert.equal(paused.code, 0, paused.stderr);
    assert.match(paused.stdout, /^paused: 2 running nodes send no request/);
    await until(() => state(data(0), 'm0') === 'paused' && state(data(1), 'm1') === 'paused');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const requests = site.total;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(site.total, requests, 'no request while paused');

    const resumed = await runCli(['resume', '--data', data(1)]);
    assert.equal(resumed.code, 0, resumed.stderr);
    await until(() => site.total > requests + 5);

    const drained = await runCli(['drain', 'm0', '--data', data(1)]);
    assert.equal(drained.code, 0, drained.stderr);
    assert.match(
      drained.stdout,
      /^drain m0: it stops within a heartbeat, after its requests in flight, and exits 0; 1 other node takes its hosts/,
    );
    const r0 = await nodes[0]!.done;
    assert.equal(r0.code, 0, r0.stderr);
    assert.match(r0.stderr, /drained \(by /);
    assert.equal(nodes[1]!.exitCode, null, 'm1 crawls on');

    const stopped = await runCli(['stop', '--data', data(0)]);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stdout, /^stop: 1 running node stops within a heartbeat/);
    const r1 = await nodes[1]!.done;
    assert.equal(r1.code, 0, r1.stderr);
    assert.match(r1.stderr, /mountcrawl stop \(by .+\): stopping after the requests in flight/);
  });
});
