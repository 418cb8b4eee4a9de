import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { CHANGING_SITE_FLAGS, ChangingSite } from '../support/changing-site.js';
import { FAST, runCli, spawnCli, tempDir } from '../support/cli.js';
import { filesOf, readJson } from '../support/data-files.js';
import type { ErrsRecord, LinksRecord } from '../../src/store/records.js';
import { until } from '../support/until.js';

const PAGES = 6;

describe('recrawl: failing revisits back off, gone pages are retired (docs/recrawl.md)', { timeout: 180_000 }, () => {
  let site: ChangingSite;
  let data: { path: string; cleanup: () => Promise<void> };
  const crawl = (): ReturnType<typeof runCli> =>
    runCli(['crawl', site.url('/p/0'), '--data', data.path, ...CHANGING_SITE_FLAGS, ...FAST, '--recrawl-after', '0s']);
  const errs = (i: number): Promise<ErrsRecord> => readJson<ErrsRecord>(data.path, filesOf(site.url(`/p/${i}`)).errs);
  const count = (i: number): number => site.site.count(site.url(`/p/${i}`));

  before(async () => {
    site = await ChangingSite.start(PAGES);
    data = await tempDir();
    const r = await crawl();
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('a revisit that fails waits 2, then 4 times its interval, visible in its errs record; the page stays stored', async () => {
    site.failing.set(1, 503);
    site.failing.set(2, 410);
    let r = await crawl();
    assert.equal(r.code, 0, r.stderr);
    let e = await errs(1);
    assert.equal(e.attempts, 1);
    assert.equal(e.final, false);
    // --recrawl-after 0s: the back-off is at least a second, doubled.
    assert.equal(Date.parse(e.nextAttemptAt!) - Date.parse(e.lastAt), 2_000);
    assert.ok(existsSync(`${data.path}/${filesOf(site.url('/p/1')).links}`), 'the stored page was dropped');
    assert.ok((await readJson<LinksRecord>(data.path, filesOf(site.url('/p/1')).links)).html !== null);

    // A pass right away: the page is not asked for before its back-off ended.
    r = await crawl();
    assert.equal(r.code, 0, r.stderr);
    const soon = await errs(1);
    if (soon.attempts > e.attempts) assert.ok(Date.parse(soon.lastAt) >= Date.parse(e.nextAttemptAt!), 'fetched before its back-off ended');
    e = soon;

    await until(() => Date.now() > Date.parse(e.nextAttemptAt!), 60_000);
    r = await crawl();
    assert.equal(r.code, 0, r.stderr);
    const later = await errs(1);
    assert.equal(later.attempts, e.attempts + 1);
    assert.ok(Date.parse(later.lastAt) >= Date.parse(e.nextAttemptAt!), 'fetched before its back-off ended');
    assert.equal(Date.parse(later.nextAttemptAt!) - Date.parse(later.lastAt), 2_000 * 2 ** (later.attempts - 1));
  });

  test('a page that stays gone (410) is retired after two revisits, and not asked for again', async () => {
    const e = await errs(2);
    assert.equal(e.final, true, JSON.stringify(e));
    assert.equal(e.code, 'HTTP_410');
    const n = count(2);
    const r = await crawl();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(count(2), n, 'a retired page was fetched again');
  });

  test('a page that answers again is stored and its errs record removed', async () => {
    // A page of its own: the others may have run out of tries on a slow machine.
    site.failing.set(3, 500);
    let r = await crawl();
    assert.equal(r.code, 0, r.stderr);
    const e = await errs(3);
    assert.equal(e.attempts, 1);
    site.failing.delete(3);
    await until(() => Date.now() > Date.parse(e.nextAttemptAt!), 60_000);
    r = await crawl();
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync(`${data.path}/${filesOf(site.url('/p/3')).errs}`));
    const rec = await readJson<LinksRecord>(data.path, filesOf(site.url('/p/3')).links);
    assert.equal(rec.history!.at(-1)!.status, 304);
  });
});

describe('recrawl with --watch: each page is fetched again when due, the node sleeping in between', { timeout: 120_000 }, () => {
  let site: ChangingSite;
  let data: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    site = await ChangingSite.start(PAGES);
    data = await tempDir();
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('every page is visited a second time, no sooner than --recrawl-after after the first; the schedule is kept', async () => {
    const node = spawnCli([
      'crawl',
      site.url('/p/0'),
      '--data',
      data.path,
      ...CHANGING_SITE_FLAGS,
      ...FAST,
      '--watch',
      '--recrawl-after',
      '3s',
    ]);
    try {
      const all = (n: number) => (): boolean =>
        Array.from({ length: PAGES }, (_, i) => site.site.count(site.url(`/p/${i}`))).every((c) => c >= n);
      await until(all(2), 60_000);
      assert.equal(node.exitCode, null, 'a watching node exited');
    } finally {
      node.kill('SIGTERM');
    }
    const r = await node.done;
    assert.equal(r.code, 143, r.stderr);
    for (let i = 0; i < PAGES; i++) {
      const rec = await readJson<LinksRecord>(data.path, filesOf(site.url(`/p/${i}`)).links);
      const h = rec.history!;
      assert.ok(h.length >= 2, `/p/${i}: ${JSON.stringify(h)}`);
      for (let k = 1; k < h.length; k++) assert.ok(Date.parse(h[k]!.at) - Date.parse(h[k - 1]!.at) >= 3_000, JSON.stringify(h));
    }
    assert.ok(
      existsSync(`${data.path}/schedule/${new URL(site.url('/')).host.replace(':', '+')}.json`) || existsSync(`${data.path}/schedule`),
    );
  });
});
