import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pagePath, startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, spawnCli } from '../support/cli.js';
import { filesOf, listFiles, tempFiles } from '../support/data-files.js';
import { startSshfsPair, type SshfsPair } from '../support/sshfs-pair.js';
import { until } from '../support/until.js';

const HOSTS = 6;
const PAGES = 40;
const PER_HOST = 2;

/**
 * Two nodes, each on its own sshfs mount of one export (two "machines" with separate FUSE
 * caches, docs/architecture.md, "Tests"), crawl one site together.
 */
/** A generated site and a pair of sshfs mounts for the tests of one describe block, stopped after them. */
function siteAndPair(options: Parameters<typeof startGeneratedSite>[0]): {
  site: () => LoopbackSite;
  pair: () => SshfsPair | { skip: string };
} {
  let site: LoopbackSite;
  let pair: SshfsPair | { skip: string };
  before(async () => {
    site = await startGeneratedSite(options);
    pair = await startSshfsPair(2);
  });
  after(async () => {
    await site.close();
    if (!('skip' in pair)) await pair.stop();
  });
  return { site: () => site, pair: () => pair };
}

describe('two nodes on two sshfs mounts of one export', { timeout: 180_000 }, () => {
  const rig = siteAndPair({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 4, crossLinks: 2, latencyMs: 20 });

  test('cover the site, fetch nothing twice, keep the per-host limit, leave nothing behind', async (t) => {
    const site = rig.site();
    const pair = rig.pair();
    if ('skip' in pair) return t.skip(`sshfs unavailable: ${pair.skip}`);
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const started = Date.now();
    const nodes = pair.mounts.map((mount, i) =>
      spawnCli(['crawl', ...seeds, '--data', join(mount, 'data'), '--per-host', String(PER_HOST), '--node-id', `m${i + 1}`, ...FAST]),
    );
    const results = await Promise.all(nodes.map((n) => n.done));
    const seconds = (Date.now() - started) / 1000;
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const pages = results.map((r) => Number(/done \(\w+\): (\d+) pages?\b/.exec(r.stderr)?.[1]));
    t.diagnostic(`sshfs pair: ${HOSTS * PAGES} pages in ${seconds.toFixed(1)} s, split ${pages.join(' + ')}`);
    assert.equal(pages[0]! + pages[1]!, HOSTS * PAGES);

    const dups = [...site.counts].filter(([, n]) => n > 1).map(([u, n]) => `${u} x${n}`);
    assert.deepEqual(dups, [], results.map((r) => r.stderr).join('\n---\n'));
    for (let h = 0; h < HOSTS; h++) assert.ok(site.maxInFlight(h) <= PER_HOST, `host ${h}: ${site.maxInFlight(h)} in flight`);

    // Read the result through the export itself (the server's view).
    const data = join(pair.export, 'data');
    const files = new Set(await listFiles(data));
    for (let h = 0; h < HOSTS; h++) {
      for (let i = 0; i < PAGES; i++) {
        const f = filesOf(site.url(h, pagePath(i)));
        assert.ok(files.has(f.links), `missing ${site.url(h, pagePath(i))}`);
        JSON.parse(await readFile(join(data, f.links), 'utf8'));
      }
    }
    assert.deepEqual(await tempFiles(data), []);
    assert.deepEqual(
      [...files].filter((f) => f.startsWith('hosts/') || f.startsWith('nodes/')),
      [],
    );
  });
});

/** Children of `pid` (from /proc: procps may not be installed). */
function childrenOf(pid: number): number[] {
  const kids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) kids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return kids;
}

/**
 * The file server dies under a two-node crawl and comes back (docs/protocol.md, "Faults of
 * the mount"): sshd and its sessions are killed mid-crawl and a new sshd starts on the same
 * port 10 s later, as after a reboot of the server; sshfs reconnects.
 */
describe('two nodes on sshfs: the server dies mid-crawl and comes back', { timeout: 180_000 }, () => {
  const hosts = 6;
  const pages = 60;
  // 200 ms a response: both nodes are still crawling when the server goes.
  const rig = siteAndPair({ hosts, pagesPerHost: pages, linksPerPage: 4, crossLinks: 1, latencyMs: 200 });

  test('both nodes wait it out and finish: every page once, no temporary file left', async (t) => {
    const site = rig.site();
    const pair = rig.pair();
    if ('skip' in pair) return t.skip(`sshfs unavailable: ${pair.skip}`);
    const dir = dirname(pair.export);
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const nodes = pair.mounts.map((mount, i) =>
      spawnCli(['crawl', ...seeds, '--data', join(mount, 'data'), '--per-host', String(PER_HOST), '--node-id', `f${i + 1}`, ...FAST]),
    );
    const fetched = (): number => [...site.counts.values()].reduce((a, b) => a + b, 0);
    await until(() => fetched() >= 60, 60_000);
    const sshd = Number(readFileSync(join(dir, 'sshd.pid'), 'utf8'));
    for (const pid of [sshd, ...childrenOf(sshd)]) process.kill(pid, 'SIGKILL');
    const cutAt = fetched();
    // The outage itself: what is tested is that the nodes outlast it.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const back = spawn('/usr/sbin/sshd', ['-D', '-f', join(dir, 'sshd_config'), '-E', join(dir, 'sshd.log')], { stdio: 'ignore' });
    t.after(() => void (back.exitCode === null && back.kill()));
    const results = await Promise.all(nodes.map((n) => n.done));
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    assert.ok(cutAt < hosts * pages, `the crawl was not over when the server died (${cutAt} requests)`);
    assert.ok(
      results.some((r) => /the mount is back/.test(r.stderr)),
      `no node saw the fault: ${results.map((r) => r.stderr).join('\n---\n')}`,
    );
    const dups = [...site.counts].filter(([, n]) => n > 1).map(([u, n]) => `${u} x${n}`);
    assert.deepEqual(dups, [], 'a page fetched but not written when the mount failed is written when it is back, not fetched again');
    const data = join(pair.export, 'data');
    const files = new Set(await listFiles(data));
    for (let h = 0; h < hosts; h++) {
      for (let i = 0; i < pages; i++) assert.ok(files.has(filesOf(site.url(h, pagePath(i))).links), `missing ${site.url(h, pagePath(i))}`);
    }
    assert.deepEqual(await tempFiles(data), [], 'no temporary file left by the fault');
  });
});
