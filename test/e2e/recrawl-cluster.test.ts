import assert from 'node:assert/strict';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pagePath, startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { LinksRecord } from '../../src/store/records.js';
import { FAST, runCli, spawnCli, tempDir } from '../support/cli.js';
import { filesOf, listFiles, tempFiles } from '../support/data-files.js';
import { until } from '../support/until.js';

const HOSTS = 3;
const PAGES = 40;
const CONCURRENCY = 4;

describe('recrawl on three nodes, one killed with SIGKILL mid-pass (docs/recrawl.md)', { timeout: 180_000 }, () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  const pages = (): string[] =>
    Array.from({ length: HOSTS }, (_, h) => Array.from({ length: PAGES }, (_, i) => site.url(h, pagePath(i)))).flat();

  before(async () => {
    site = await startGeneratedSite({ hosts: HOSTS, pagesPerHost: PAGES, linksPerPage: 4, crossLinks: 1, latencyMs: 25 });
    data = await tempDir();
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('nothing is lost and each due page is fetched once (but for those in flight at the kill)', async () => {
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const first = await runCli(['crawl', ...seeds, '--data', data.path, ...FAST]);
    assert.equal(first.code, 0, first.stderr);
    // The first pass happened eight days ago.
    const weekAgo = new Date(Date.now() - 8 * 86_400_000).toISOString();
    const records = (await listFiles(data.path)).filter(
      (f) => f.startsWith('links/') && f.endsWith('.json') && !f.split('/').pop()!.startsWith('.'),
    );
    for (const f of records) {
      const r = JSON.parse(await readFile(join(data.path, f), 'utf8')) as LinksRecord;
      await writeFile(join(data.path, f), JSON.stringify({ ...r, fetchedAt: weekAgo }));
    }
    const firstCounts = new Map(site.counts);
    const secondPass = (): number => pages().reduce((n, u) => n + site.count(u) - (firstCounts.get(u) ?? 0), 0);

    const args = (id: string): string[] => [
      'crawl',
      '--data',
      data.path,
      ...FAST,
      '--recrawl-after',
      '7d',
      '--node-id',
      id,
      '--concurrency',
      String(CONCURRENCY),
      '--per-host',
      '1',
    ];
    // The first node writes the new run's settings (--per-host 1, --recrawl-after) before the
    // others start: they adopt them (docs/operations.md).
    const nodes = [spawnCli(args('a'))];
    await until(async () => (await readdir(join(data.path, 'nodes')).catch(() => [] as string[])).includes('a.json'), 30_000);
    nodes.push(...['b', 'c'].map((id) => spawnCli(args(id))));
    await until(() => secondPass() >= 20, 60_000);
    nodes[0]!.kill('SIGKILL');
    const results = await Promise.all(nodes.map((n) => n.done));
    assert.equal(results[0]!.signal, 'SIGKILL');
    for (const r of results.slice(1)) assert.equal(r.code, 0, r.stderr);

    let twice = 0;
    for (const url of pages()) {
      const n = site.count(url) - (firstCounts.get(url) ?? 0);
      assert.ok(n >= 1, `${url} was not revisited`);
      assert.ok(n <= 2, `${url} revisited ${n} times`);
      if (n === 2) twice++;
      const rec = JSON.parse(await readFile(join(data.path, filesOf(url).links), 'utf8')) as LinksRecord;
      assert.ok((rec.history?.length ?? 0) >= 1, `${url} has no visit in its history`);
      assert.equal(rec.history!.at(-1)!.changed, false, `${url} counted as changed`);
    }
    assert.ok(twice <= CONCURRENCY, `${twice} pages revisited twice, more than were in flight`);
    // A later pass finds nothing due.
    const before = secondPass();
    const again = await runCli(args('d'));
    assert.equal(again.code, 0, again.stderr);
    assert.equal(secondPass(), before, 'pages fetched again before they were due');
    assert.deepEqual(
      (await tempFiles(data.path)).filter((f) => !f.startsWith('schedule/')),
      [],
    );
  });
});
