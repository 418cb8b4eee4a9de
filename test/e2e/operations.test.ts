import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { generatedSite } from '../../src/site/generated-site.js';
import { LoopbackSite } from '../../src/site/site-server.js';
import { runCli, spawnCli, tempDir } from '../support/cli.js';
import { until } from '../support/until.js';

const HOSTS = 3;
const PAGES = 40;

/** Fast heartbeats and retries, as test/support/cli.ts FAST, without its --delay and --no-progress. */
const QUICK = ['--heartbeat', '100', '--dead-after', '15000', '--retry-delay', '0.2'];

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function scrape(port: number): Promise<{ type: string; text: string } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    return { type: res.headers.get('content-type') ?? '', text: await res.text() };
  } catch {
    return undefined; // not listening yet
  }
}

/** The value of one series in a scrape, or undefined. */
function series(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.split(',').every((p) => l.includes(p)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('operating a crawl: one configuration, config set, status --watch, metrics', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let seeds: string[];

  before(async () => {
    let started: LoopbackSite | undefined;
    const handle = generatedSite({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 4 }, () => started!.hosts);
    started = await LoopbackSite.start({ hosts: HOSTS, latencyMs: 5, handle });
    site = started;
    seeds = site.hosts.map((h) => `${h.origin}/`);
  });
  after(() => site.close());
  beforeEach(async () => {
    data = await tempDir();
  });
  afterEach(() => data.cleanup());

  test('three nodes: one with a conflicting --delay refuses (exit 2); config set delay reaches the running two', async () => {
    const args = (id: string, delay: string): string[] => [
      'crawl',
      ...seeds,
      '--data',
      data.path,
      '--node-id',
      id,
      '--delay',
      delay,
      '--concurrency',
      '4',
      ...QUICK,
    ];
    const a = spawnCli(args('a', '400'));
    await until(() => existsSync(join(data.path, '.mountcrawl-settings.json')));
    const b = spawnCli(args('b', '400'));
    await until(() => existsSync(join(data.path, 'nodes', 'a.json')));
    const c = await runCli(args('c', '0'));
    assert.equal(c.code, 2, c.stderr);
    const lines = c.stderr.trim().split('\n');
    assert.equal(lines.length, 1, c.stderr);
    assert.match(
      lines[0]!,
      /^mountcrawl: SETTINGS_CONFLICT: --delay 0 conflicts with this crawl's --delay 400 and (1 node of the crawl runs|2 nodes of the crawl run): leave the option out to adopt the crawl's, or change it with mountcrawl config set \(mountcrawl config shows them\)$/,
    );
    assert.equal(existsSync(join(data.path, 'nodes', 'c.json')), false, 'the refused node wrote no record');

    // At 400 ms a request per host the crawl takes 16 s; from the set on, none.
    await until(() => existsSync(join(data.path, 'nodes', 'b.json')));
    const set = await runCli(['config', 'set', 'delay', '0', '--data', data.path]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /^--delay 400 -> 0 \(revision 2\): running nodes apply it within a heartbeat$/m);
    const [ra, rb] = await Promise.all([a.done, b.done]);
    for (const r of [ra, rb]) {
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /settings revision 2: --delay 400 -> 0: applied/);
    }
    const shown = await runCli(['config', '--data', data.path]);
    assert.match(shown.stdout, /^\* delay +0$/m);
    // A setting running nodes cannot apply is refused while one runs; with none running it is written.
    const include = await runCli(['config', 'set', 'include', 'page', '--data', data.path]);
    assert.equal(include.code, 0, include.stderr);
    assert.match(include.stdout, /nodes started from now on use it/);
  });

  test('status --watch off a terminal prints plain snapshots; /metrics is scraped over 127.0.0.1', async () => {
    const port = await freePort();
    const node = spawnCli([
      'crawl',
      ...seeds,
      '--data',
      data.path,
      '--node-id',
      'm1',
      '--delay',
      '150',
      '--watch',
      '--metrics-port',
      String(port),
      '--no-progress',
      ...QUICK,
    ]);
    try {
      let scraped: { type: string; text: string } | undefined;
      await until(async () => {
        scraped = await scrape(port);
        return (series(scraped?.text ?? '', 'mountcrawl_pages_total', 'node="m1",kind="html",status="200"') ?? 0) >= 3;
      });
      assert.match(scraped!.type, /^text\/plain; version=0\.0\.4/);
      const text = scraped!.text;
      assert.ok((series(text, 'mountcrawl_requests_total', 'node="m1",status="200"') ?? 0) >= 3, text);
      assert.ok((series(text, 'mountcrawl_bytes_total', 'node="m1"') ?? 0) > 0, text);
      assert.equal(series(text, 'mountcrawl_node_state', 'node="m1",state="crawling"'), 1, text);
      assert.match(text, /^# TYPE mountcrawl_errors_total counter$/m);
      assert.match(text, /^# TYPE mountcrawl_hosts_held gauge$/m);
      assert.ok(
        text
          .split('\n')
          .filter((l) => l !== '' && !l.startsWith('#'))
          .every((l) => l.startsWith('mountcrawl_')),
        'every series is named mountcrawl_*',
      );

      // About two seconds of watching: until two snapshots are out (the start may be slow on a loaded machine).
      const watch = spawnCli(['status', '--watch', '--data', data.path]);
      let out = '';
      watch.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      await until(() => out.split('\n\n').length > 2);
      watch.kill('SIGTERM');
      const w = await watch.done;
      assert.equal(w.code, 0, w.stderr);
      assert.ok(!w.stdout.includes('\u001b'), 'no terminal control codes off a terminal');
      const snapshots = w.stdout.split('\n\n').filter((s) => s.trim() !== '');
      assert.ok(snapshots.length >= 2, w.stdout);
      for (const s of snapshots) {
        const lines = s.split('\n');
        assert.match(lines[0]!, new RegExp(`^${data.path} +\\d{4}-`));
        assert.match(lines[1]!, /^node +state +pages\/s +pages +hosts +queued +in flight +errors$/);
        assert.match(lines[2]!, /^m1 +(crawling|idle|waiting) +[\d.]+ +\d+ +\d+ +\d+ +\d+ +\d+$/);
        assert.match(lines[3]!, /^total +1 live /);
      }
    } finally {
      node.kill('SIGTERM');
      await node.done;
    }
  });

  test('--processes 2 --metrics-port: the supervisor serves one endpoint, each series labelled by node', async () => {
    const port = await freePort();
    const sup = spawnCli([
      'crawl',
      ...seeds,
      '--data',
      data.path,
      '--node-id',
      'p',
      '--processes',
      '2',
      '--delay',
      '150',
      '--watch',
      '--metrics-port',
      String(port),
      '--no-progress',
      ...QUICK,
    ]);
    try {
      let text = '';
      await until(async () => {
        text = (await scrape(port))?.text ?? '';
        return (
          series(text, 'mountcrawl_heartbeats_total', 'node="p-1"') !== undefined &&
          series(text, 'mountcrawl_heartbeats_total', 'node="p-2"') !== undefined
        );
      });
      const nodes = new Set([...text.matchAll(/node="([^"]+)"/g)].map((m) => m[1]));
      assert.deepEqual([...nodes].sort(), ['p-1', 'p-2']);
    } finally {
      sup.kill('SIGTERM');
      await sup.done;
    }
  });
});
