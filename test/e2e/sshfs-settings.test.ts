import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { runCli, spawnCli } from '../support/cli.js';
import { startSshfsPair, type SshfsPair } from '../support/sshfs-pair.js';
import { until } from '../support/until.js';

/** Fast heartbeats, info lines kept (the settings a node applies are logged as info). */
const QUICK = ['--heartbeat', '100', '--dead-after', '15000', '--retry-delay', '0.2'];

/** The crawl's settings over two sshfs mounts of one export: two "machines" with separate caches. */
describe('the crawl settings on two sshfs mounts of one export', { timeout: 180_000 }, () => {
  let site: LoopbackSite;
  let pair: SshfsPair | { skip: string };
  before(async () => {
    site = await startGeneratedSite({ hosts: 2, pagesPerHost: 40, linksPerPage: 4, latencyMs: 5 });
    pair = await startSshfsPair(2);
  });
  after(async () => {
    await site.close();
    if (!('skip' in pair)) await pair.stop();
  });

  test('two nodes started at the same moment with different --delay: one crawls, the other refuses', async (t) => {
    if ('skip' in pair) return t.skip(`sshfs unavailable: ${pair.skip}`);
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const data = (i: number): string => join((pair as SshfsPair).mounts[i]!, 'race');
    // --delay 200: the crawl lasts seconds, so the node that comes second finds the first
    // running (with 10 ms it once ended before the other looked, and a new run may change them).
    const nodes = [0, 1].map((i) =>
      spawnCli(['crawl', ...seeds, '--data', data(i), '--node-id', `r${i}`, '--delay', String(200 + i), '--no-progress', ...QUICK]),
    );
    const results = await Promise.all(nodes.map((n) => n.done));
    const codes = results.map((r) => r.code).sort();
    assert.deepEqual(codes, [0, 2], results.map((r) => r.stderr).join('\n---\n'));
    const refused = results.find((r) => r.code === 2)!;
    assert.match(refused.stderr.trim(), /^mountcrawl: SETTINGS_CONFLICT: --delay 20\d conflicts with this crawl's --delay 20\d and /);
  });

  test('a conflicting --delay on the other mount refuses; config set delay there reaches the running node', async (t) => {
    if ('skip' in pair) return t.skip(`sshfs unavailable: ${pair.skip}`);
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const data = (i: number): string => join((pair as SshfsPair).mounts[i]!, 'live');
    const first = spawnCli(['crawl', ...seeds, '--data', data(0), '--node-id', 'm1', '--delay', '400', '--watch', ...QUICK]);
    try {
      await until(() => existsSync(join(data(1), 'nodes', 'm1.json')));
      const other = await runCli(['crawl', '--data', data(1), '--node-id', 'm2', '--delay', '0', ...QUICK]);
      assert.equal(other.code, 2, other.stderr);
      assert.match(
        other.stderr,
        /^mountcrawl: SETTINGS_CONFLICT: --delay 0 conflicts with this crawl's --delay 400 and 1 node of the crawl runs: /,
      );
      const set = await runCli(['config', 'set', 'delay', '0', '--data', data(1)]);
      assert.equal(set.code, 0, set.stderr);
      await until(() => /settings revision 2: --delay 400 -> 0: applied/.test(first.stderrSoFar()));
    } finally {
      first.kill('SIGTERM');
      await first.done;
    }
  });
});
