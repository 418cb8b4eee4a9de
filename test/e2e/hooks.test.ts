import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pagePath, startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { LinksRecord } from '../../src/store/records.js';
import { FAST, runCli, tempDir } from '../support/cli.js';
import { filesOf, readJson } from '../support/data-files.js';
import { pageRoute, redirectRoute, startRoutedSite } from '../support/routed-site.js';

const HOOK = `
export function filter(url) {
  return !url.endsWith('/p/4.html');
}
export async function onPage(page) {
  if (page.url.endsWith('/p/2.html')) throw new Error('hook bug on purpose');
  return {
    data: { title: page.$('title').text(), h1: page.$('h1').text(), depth: page.depth },
    links: [...page.links, '/from-hook.html', 'mailto:nobody@example.com'],
  };
}
`;

describe('--hook: a user module around the crawl', { timeout: 60_000 }, () => {
  let site: LoopbackSite;
  let tmp: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    site = await startGeneratedSite({ hosts: 1, pagesPerHost: 8, linksPerPage: 2 });
    tmp = await tempDir();
    await writeFile(join(tmp.path, 'hook.mjs'), HOOK);
  });
  after(async () => {
    await site.close();
    await tmp.cleanup();
  });

  test('filter keeps URLs out; onPage adds data and links; a throwing hook changes nothing and is reported', async () => {
    const data = join(tmp.path, 'data');
    const r = await runCli(['crawl', site.url(0, '/'), '--data', data, '--hook', join(tmp.path, 'hook.mjs'), ...FAST]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(site.count(site.url(0, '/p/4.html')), 0, 'filtered URL fetched');
    assert.equal(site.count(site.url(0, '/from-hook.html')), 1, 'a link added by the hook is crawled');

    const home = await readJson<LinksRecord>(data, filesOf(site.url(0, pagePath(0))).links);
    assert.deepEqual(home.data, { title: `page 0 of ${site.hosts[0]!.hostDir}`, h1: 'Page 0', depth: 0 });
    assert.ok(home.links.includes(site.url(0, '/from-hook.html')), 'hook links are normalized and stored');
    assert.ok(!home.links.some((l) => l.startsWith('mailto:')), 'unusable hook links are dropped');

    const two = await readJson<LinksRecord>(data, filesOf(site.url(0, pagePath(2))).links);
    assert.equal(two.data, undefined, 'the page whose hook threw is stored as found');
    assert.match(r.stderr, /--hook onPage \(.*hook\.mjs\) threw: hook bug on purpose/);
  });

  test('a hook file that cannot be used is one clear line', async () => {
    await writeFile(join(tmp.path, 'empty.mjs'), 'export const x = 1;\n');
    const r = await runCli(['crawl', site.url(0, '/'), '--data', join(tmp.path, 'd2'), '--hook', join(tmp.path, 'empty.mjs'), ...FAST]);
    assert.equal(r.code, 2);
    assert.match(r.stderr.trim(), /^mountcrawl: BAD_OPTION: --hook .*exports none of filter, beforeFetch, afterFetch, onPage, priority$/);
  });
});

describe('--hook filter and redirects: one admission chain', { timeout: 60_000 }, () => {
  let site: LoopbackSite;
  let tmp: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    site = await startRoutedSite([
      {
        '/': pageRoute(['/go', '/kept']),
        '/go': redirectRoute('/blocked/target.html'),
        '/kept': redirectRoute('/ok/target.html'),
        '/blocked/target.html': pageRoute(),
        '/ok/target.html': pageRoute(),
      },
    ]);
    tmp = await tempDir();
    await writeFile(join(tmp.path, 'hook.mjs'), "export function filter(url) { return !url.includes('/blocked/'); }\n");
  });
  after(async () => {
    await site.close();
    await tmp.cleanup();
  });

  test('a same-host redirect to a URL the filter rejects is not fetched', async () => {
    const data = join(tmp.path, 'data');
    const r = await runCli(['crawl', site.url(0, '/'), '--data', data, '--hook', join(tmp.path, 'hook.mjs'), ...FAST]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(site.count(site.url(0, '/go')), 1, 'the redirecting URL is fetched');
    assert.equal(site.count(site.url(0, '/blocked/target.html')), 0, 'its filtered target is not');
    assert.equal(site.count(site.url(0, '/ok/target.html')), 1, 'a target the filter keeps is followed');
  });
});
