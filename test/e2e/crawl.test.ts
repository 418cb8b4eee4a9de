import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { EXPECTED_HOST0, EXPECTED_HOST1, SJIS_PATH, startTestSite } from '../support/test-site.js';
import { FAST, runCli, tempDir } from '../support/cli.js';
import { filesOf, listFiles, readJson, tempFiles } from '../support/data-files.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { LinksRecord } from '../../src/store/records.js';

describe('mountcrawl crawl, one node, end to end', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let first: Awaited<ReturnType<typeof runCli>>;

  before(async () => {
    site = await startTestSite();
    data = await tempDir();
    first = await runCli(['crawl', site.url(0, '/'), site.url(1, '/'), '--data', data.path, ...FAST]);
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('exits 0 and fetches every expected URL exactly once, and nothing else', () => {
    assert.equal(first.code, 0, first.stderr);
    const expected = [...EXPECTED_HOST0.map((p) => site.url(0, p)), ...EXPECTED_HOST1.map((p) => site.url(1, p))].sort();
    assert.deepEqual([...site.counts.keys()].sort(), expected);
    for (const [url, n] of site.counts) assert.equal(n, 1, `${url} fetched ${n} times`);
    assert.equal(site.count(site.url(2, '/never.html')), 0, 'out-of-scope host fetched');
  });

  test('every page has its links record, HTML pages their html file, the 404 an errs record', async () => {
    for (const path of EXPECTED_HOST0.filter((p) => p !== '/robots.txt')) {
      const f = filesOf(site.url(0, path));
      if (path === '/missing') {
        assert.ok(existsSync(`${data.path}/${f.errs}`), `no errs record for ${path}`);
        assert.ok(!existsSync(`${data.path}/${f.links}`));
        const errs = await readJson(data.path, f.errs);
        assert.equal(errs.code, 'HTTP_404');
        assert.equal(errs.final, true);
        continue;
      }
      assert.ok(existsSync(`${data.path}/${f.links}`), `no links record for ${path}`);
      const rec = await readJson<LinksRecord>(data.path, f.links);
      assert.equal(rec.url, site.url(0, path));
      const isHtml = rec.status === 200 && rec.contentType?.startsWith('text/html');
      assert.equal(existsSync(`${data.path}/${f.html}`), Boolean(isHtml), `html file of ${path}`);
      assert.equal(rec.html, isHtml ? f.html : null);
    }
  });

  test('the home page record holds its links absolute, normalized and once each', async () => {
    const rec = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/')).links);
    const h0 = (p: string): string => site.url(0, p);
    assert.deepEqual(rec.links, [
      h0('/a.html'),
      h0('/dir/b.html'),
      h0('/c.html'),
      h0('/d.html'),
      h0('/redirect/1'),
      h0('/offsite'),
      h0('/missing'),
      h0('/doc.pdf'),
      h0('/gzip.html'),
      h0('/sjis.html'),
      h0('/base.html'),
      h0('/long.html'),
      site.url(1, '/'),
      site.url(2, '/never.html'),
    ]);
    assert.equal(rec.status, 200);
    assert.equal(rec.depth, 0);
    assert.equal(typeof rec.fetchedAt, 'string');
    assert.ok(rec.bytes > 0);
  });

  test('redirects within a host are followed and recorded; to another host only recorded', async () => {
    const r1 = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/redirect/1')).links);
    assert.equal(r1.status, 301);
    assert.equal(r1.finalUrl, site.url(0, '/target.html'));
    assert.deepEqual(r1.links, [site.url(0, '/redirect/2')]);
    const target = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/target.html')).links);
    assert.equal(target.status, 200);
    const off = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/offsite')).links);
    assert.equal(off.status, 302);
    assert.deepEqual(off.links, [site.url(1, '/landing.html')]);
  });

  test('gzip, Shift_JIS with only a meta charset, <base href>, long URLs', async () => {
    const gz = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/gzip.html')).links);
    assert.deepEqual(gz.links, [site.url(0, '/from-gzip.html')]);
    const sjis = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/sjis.html')).links);
    assert.equal(sjis.charset, 'Shift_JIS');
    assert.deepEqual(sjis.links, [site.url(0, SJIS_PATH)]);
    const base = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/base.html')).links);
    assert.deepEqual(base.links, [site.url(0, '/based/x.html')]);
    const long = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/long.html')).links);
    assert.deepEqual(long.links, [], 'a link over 8 KiB is dropped');
    const pdf = await readJson<LinksRecord>(data.path, filesOf(site.url(0, '/doc.pdf')).links);
    assert.equal(pdf.contentType, 'application/pdf');
    assert.deepEqual(pdf.links, []);
  });

  test('leaves no temp files, no leases and no node records behind', async () => {
    assert.deepEqual(await tempFiles(data.path), []);
    const files = await listFiles(data.path);
    assert.deepEqual(
      files.filter((f) => f.startsWith('hosts/') || f.startsWith('nodes/')),
      [],
    );
    assert.ok(files.includes('.mountcrawl'));
    assert.equal(files.filter((f) => f.startsWith('seeds/')).length, 2);
  });

  test('the summary counts pages, errors by code and cut links', () => {
    assert.match(first.stderr, /done \(complete\): 20 pages/);
    assert.match(first.stderr, /errors: HTTP_404 1/);
    assert.match(first.stderr, /tooLong 1/);
  });

  test('a second run fetches nothing', async () => {
    const before = site.total;
    const again = await runCli(['crawl', site.url(0, '/'), site.url(1, '/'), '--data', data.path, ...FAST]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(site.total, before, 'the rerun made requests');
    assert.match(again.stderr, /done \(complete\): 0 pages/);
  });

  test('status reports pages, errors and hosts; --json too', async () => {
    const human = await runCli(['status', '--data', data.path, '--no-wait']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /pages\s+20 done/);
    assert.match(human.stdout, /HTTP_404 1/);
    const json = await runCli(['status', '--data', data.path, '--json', '--no-wait']);
    const report = JSON.parse(json.stdout) as { pages: number; hosts: { host: string; pages: number }[] };
    assert.equal(report.pages, 20);
    assert.deepEqual(
      report.hosts.map((h) => [h.host, h.pages]),
      [
        [site.hosts[0]!.hostDir, 18],
        [site.hosts[1]!.hostDir, 2],
      ],
    );
  });

  test('key and locate print the key and the files of a URL', async () => {
    const f = filesOf(site.url(0, '/a.html'));
    const key = await runCli(['key', `${site.url(0, '/x/../a.html')}#frag`]);
    assert.equal(key.stdout.trim(), `${f.key}\t${site.url(0, '/a.html')}`);
    const locate = await runCli(['locate', site.url(0, '/a.html'), '--data', data.path, '--json']);
    const loc = JSON.parse(locate.stdout) as { exists: Record<string, boolean> };
    assert.deepEqual(loc.exists, { html: true, links: true, errs: false });
  });
});
