import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { ErrsRecord, LinksRecord } from '../../src/store/records.js';
import { isSafeHostDir } from '../../src/url/host-dir.js';
import { FAST, runCli, spawnCli, tempDir, type CliResult } from '../support/cli.js';
import { filesOf, listFiles, readJson } from '../support/data-files.js';
import {
  UNRESOLVABLE_HOST,
  UNSAFE_HOST_URLS,
  selfSignedCertificate,
  startHostileSite,
  startHttpsHost,
  type HostileLog,
  type HttpsHost,
} from '../support/hostile-site.js';
import { watchPeakRss } from '../support/peak-memory.js';
import { pageRoute, requestedPaths, startRoutedSite, startTimes } from '../support/routed-site.js';

const MAX_BYTES = 1024 * 1024;
const OPTIONS = ['--scope', 'any', '--max-attempts', '2', '--timeout', '1.5', '--max-bytes', '1MiB', '--max-redirects', '3'];
/** Far below what a decoded 512 MiB bomb would take, well above a crawling node's own needs. */
const RSS_LIMIT = 256 * 1024 * 1024;

describe('hostile responses', () => {
  let site: LoopbackSite;
  let log: HostileLog;
  let data: { path: string; cleanup: () => Promise<void> };
  let run: CliResult;
  let seconds: number;
  let peak: number | undefined;

  const errs = (i: number, path: string): Promise<ErrsRecord> => readJson<ErrsRecord>(data.path, filesOf(site.url(i, path)).errs);
  const links = (i: number, path: string): Promise<LinksRecord> => readJson<LinksRecord>(data.path, filesOf(site.url(i, path)).links);
  const has = (rel: string): boolean => existsSync(join(data.path, rel));

  before(async () => {
    ({ site, log } = await startHostileSite());
    data = await tempDir();
    const t0 = performance.now();
    const child = spawnCli(['crawl', ...site.hosts.map((h) => `${h.origin}/`), '--data', data.path, ...FAST, ...OPTIONS], {}, 30_000);
    [run, peak] = await Promise.all([child.done, watchPeakRss(child.pid!, child.done)]);
    seconds = (performance.now() - t0) / 1000;
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('the crawl completes', (t) => {
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /done \(complete\)/);
    // Host 1 drips forever: the crawl ends (before the 30 s kill) only because the deadline cut it.
    t.diagnostic(`took ${seconds.toFixed(1)} s`);
  });

  test('a body that drips a byte a second is cut at the --timeout deadline: FETCH_TIMEOUT', async () => {
    assert.equal(log.drips.length, 2, 'two attempts');
    for (const d of log.drips) {
      const life = d.end! - d.start;
      // The site sees the request some time after the crawler started its 1.5 s deadline (a
      // connect, a busy event loop: up to hundreds of ms on a loaded machine), and a late timer
      // only lengthens it: the bounds allow for that, and still fail for no deadline (the drip
      // never ends) or one that fires at once.
      assert.ok(life >= 1_000 && life < 15_000, `the dripping response lasted ${life.toFixed(0)} ms, --timeout is 1.5 s`);
    }
    const e = await errs(1, '/');
    assert.equal(e.code, 'FETCH_TIMEOUT');
    assert.equal(e.attempts, 2);
    assert.equal(e.final, true);
  });

  test('the dripping host does not hold up the others', () => {
    const quick = startTimes(site, 2);
    assert.equal(quick.length, 6, 'robots.txt and five pages');
    // Not a time limit (a loaded machine is slow): the quick host's requests go on while a drip
    // is in flight. Had the drip held the others up, none would arrive during one.
    const during = quick.filter((t) => log.drips.some((d) => t > d.start && t < d.end!));
    assert.ok(during.length > 0, 'no request of the quick host arrived while the dripping one was in flight');
  });

  test('a 20 MiB body is cut at --max-bytes; links in the kept part are followed', async () => {
    const rec = await links(0, '/huge.html');
    assert.equal(rec.truncated, true);
    assert.equal(rec.bytes, MAX_BYTES);
    assert.equal((await stat(join(data.path, filesOf(site.url(0, '/huge.html')).html))).size, MAX_BYTES);
    assert.deepEqual(rec.links, [site.url(0, '/from-huge.html')]);
    assert.equal(site.count(site.url(0, '/from-huge.html')), 1);
    assert.equal(site.count(site.url(0, '/after-cut.html')), 0);
    assert.equal(site.count(site.url(0, '/huge.html')), 1);
  });

  test('a gzip bomb is cut at --max-bytes of decoded bytes, with memory bounded', async () => {
    const rec = await links(0, '/bomb.html');
    assert.equal(rec.truncated, true);
    assert.equal(rec.bytes, MAX_BYTES);
    assert.deepEqual(rec.links, [site.url(0, '/from-bomb.html')]);
    assert.equal(site.count(site.url(0, '/from-bomb.html')), 1);
    assert.ok(peak !== undefined, 'no /proc/<pid>/status');
    assert.ok(peak < RSS_LIMIT, `peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`);
  });

  test('PNG bytes served as text/html: BINARY_BODY, final, never parsed or stored', async () => {
    const e = await errs(0, '/image.html');
    assert.equal(e.code, 'BINARY_BODY');
    assert.equal(e.final, true);
    assert.equal(site.count(site.url(0, '/image.html')), 1);
    const f = filesOf(site.url(0, '/image.html'));
    assert.ok(!has(f.links) && !has(f.html));
  });

  test('an undeclared windows-1252 page: its link with é (0xE9) becomes %C3%A9', async () => {
    const rec = await links(0, '/latin.html');
    assert.equal(rec.charset, 'windows-1252');
    assert.deepEqual(rec.links, [site.url(0, '/caf%C3%A9.html')]);
    assert.equal(site.count(site.url(0, '/caf%C3%A9.html')), 1);
  });

  test('malformed HTML still yields its links', async () => {
    const rec = await links(0, '/malformed.html');
    assert.deepEqual(
      rec.links,
      [1, 2, 3, 4, 5].map((n) => site.url(0, `/mal/${n}.html`)),
    );
  });

  test('a javascript: <base href> is ignored: relative links resolve against the page', async () => {
    const rec = await links(0, '/base-js.html');
    assert.deepEqual(rec.links, [site.url(0, '/from-base-js.html')]);
    assert.equal(site.count(site.url(0, '/from-base-js.html')), 1);
  });

  test('a redirect loop A -> B -> A: one final REDIRECT_LOOP errs record, each URL requested once', async () => {
    const e = await errs(0, '/loop-a');
    assert.equal(e.code, 'REDIRECT_LOOP');
    assert.equal(e.final, true);
    for (const p of ['/loop-a', '/loop-b']) assert.equal(site.count(site.url(0, p)), 1, p);
    const b = filesOf(site.url(0, '/loop-b'));
    assert.ok(!has(b.errs) && !has(b.links), 'a second record for the loop');
    assert.ok(!has(filesOf(site.url(0, '/loop-a')).links));
  });

  test('a redirect chain longer than --max-redirects: TOO_MANY_REDIRECTS, no hop beyond it requested', async () => {
    const e = await errs(0, '/chain/1');
    assert.equal(e.code, 'TOO_MANY_REDIRECTS');
    assert.equal(e.final, true);
    assert.deepEqual(
      requestedPaths(site, 0).filter((p) => p.startsWith('/chain/')),
      ['/chain/1', '/chain/2', '/chain/3', '/chain/4'],
    );
    for (const n of [1, 2, 3, 4]) assert.equal(site.count(site.url(0, `/chain/${n}`)), 1);
  });

  test('a body shorter than its Content-Length, then a close: a transient error, retried', async () => {
    const e = await errs(3, '/short-body.html');
    assert.equal(e.code, 'CONNECTION_RESET');
    assert.equal(e.attempts, 2, 'transient: tried --max-attempts times');
    assert.equal(e.final, true);
    assert.equal(site.count(site.url(3, '/short-body.html')), 2);
    assert.ok(!has(filesOf(site.url(3, '/short-body.html')).html));
  });

  test('a connection reset mid-body: CONNECTION_RESET, retried', async () => {
    const e = await errs(3, '/reset.html');
    assert.equal(e.code, 'CONNECTION_RESET');
    assert.equal(e.attempts, 2);
    assert.equal(site.count(site.url(3, '/reset.html')), 2);
  });

  test('a body that is not in its declared Content-Encoding: DECODE_FAILED, final', async () => {
    const e = await errs(0, '/not-gzip.html');
    assert.equal(e.code, 'DECODE_FAILED');
    assert.equal(e.final, true);
    assert.equal(site.count(site.url(0, '/not-gzip.html')), 1);
  });

  test('host names that are not safe directory names never reach the file system', async () => {
    const home = await links(0, '/');
    for (const bad of UNSAFE_HOST_URLS) assert.ok(!home.links.some((l) => l.startsWith(bad.slice(0, 12))), `${bad} kept as a link`);
    const e = await errs(0, '/redir-unsafe');
    assert.equal(e.code, 'BAD_REDIRECT');
    assert.equal(e.final, true);
    const allowed = new Set([...site.hosts.map((h) => h.hostDir), UNRESOLVABLE_HOST]);
    const top = (await readdir(data.path)).sort();
    assert.deepEqual(top, [
      '.mountcrawl',
      '.mountcrawl-run.json',
      '.mountcrawl-settings.json',
      'errs',
      'files',
      'handoff',
      'hosts',
      'html',
      'links',
      'nodes',
      'robots',
      'seeds',
      'summaries',
    ]);
    for (const f of await listFiles(data.path)) {
      const parts = f.split('/');
      if (['html', 'links', 'errs'].includes(parts[0]!)) {
        assert.equal(parts.length, 3, f);
        assert.ok(isSafeHostDir(parts[1]!) && allowed.has(parts[1]!), f);
      } else if (parts[0] === 'robots' || parts[0] === 'hosts') {
        const name = parts[1]!.replace(/\.(txt|lease)$/, '');
        assert.ok(isSafeHostDir(name) && allowed.has(name), f);
      }
    }
  });

  // A failed robots.txt fetch makes the host wait (RFC 9309 §2.3.1.4); after --max-attempts
  // (or at once when trying again cannot help) the host is left alone for the run and its
  // queued URLs are recorded with the reason (HostKeeper.#giveUp).
  test('a host name that does not exist: DNS_NO_SUCH_HOST recorded for its URL, final at the first attempt', async () => {
    const e = await readJson<ErrsRecord>(data.path, filesOf(`http://${UNRESOLVABLE_HOST}/`).errs);
    assert.equal(e.code, 'DNS_NO_SUCH_HOST');
    assert.equal(e.final, true);
    assert.equal(e.attempts, 1, 'not tried again');
  });
});

describe('TLS errors', () => {
  const address = '127.0.0.40';
  const tls = selfSignedCertificate(address);
  const skip = tls === undefined ? 'openssl is not available to make a self-signed certificate' : false;
  let host: HttpsHost;
  let data: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    if (tls === undefined) return;
    host = await startHttpsHost(address, tls, { '/': ['/tls-page.html'], '/tls-page.html': [] });
    data = await tempDir();
  });
  after(async () => {
    await host?.close();
    await data?.cleanup();
  });

  test('a self-signed certificate: no request gets through', { skip, timeout: 20_000 }, async () => {
    const r = await runCli(['crawl', `${host.origin}/`, '--data', `${data.path}/strict`, ...FAST, '--max-attempts', '2'], {
      timeoutMs: 15_000,
    });
    // The only seed failed and nothing was stored: NOTHING_FETCHED (docs/errors.md).
    assert.equal(r.code, 5, r.stderr);
    assert.equal(host.counts.size, 0, 'an HTTP request was made over a certificate that failed');
    assert.ok(!existsSync(join(data.path, 'strict', filesOf(`${host.origin}/`).links)));
  });

  test('a self-signed certificate: TLS_ERROR recorded for the URL', { skip }, async () => {
    const e = await readJson<ErrsRecord>(`${data.path}/strict`, filesOf(`${host.origin}/`).errs);
    assert.equal(e.code, 'TLS_ERROR');
    assert.equal(e.final, true);
  });

  test('with --insecure the pages are fetched', { skip, timeout: 20_000 }, async () => {
    const r = await runCli(['crawl', `${host.origin}/`, '--data', `${data.path}/insecure`, ...FAST, '--insecure'], {
      timeoutMs: 15_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual([...host.counts.entries()].sort(), [
      ['/', 1],
      ['/robots.txt', 1],
      ['/tls-page.html', 1],
    ]);
    const rec = await readJson<LinksRecord>(`${data.path}/insecure`, filesOf(`${host.origin}/`).links);
    assert.deepEqual(rec.links, [`${host.origin}/tls-page.html`]);
  });
});

describe('--deny-private', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let run: CliResult;

  before(async () => {
    site = await startRoutedSite([{ '/': pageRoute(['/a.html']), '/a.html': pageRoute() }]);
    data = await tempDir();
    run = await runCli(['crawl', site.url(0, '/'), '--data', data.path, ...FAST, '--deny-private'], { timeoutMs: 15_000 });
  });
  after(async () => {
    await site?.close();
    await data?.cleanup();
  });

  test('a crawl of a loopback site fetches nothing', () => {
    assert.equal(run.code, 5, run.stderr); // NOTHING_FETCHED: the only seed was refused
    assert.match(run.stderr, /NOTHING_FETCHED: .*PRIVATE_ADDRESS/);
    assert.equal(site.total, 0);
  });

  test('a name that resolves to a loopback address is refused after the lookup', { timeout: 20_000 }, async () => {
    const local = await startRoutedSite([{ '/': pageRoute() }], { firstOctet: 1 });
    try {
      const url = `http://localhost:${local.hosts[0]!.port}/`;
      const denied = await runCli(['crawl', url, '--data', `${data.path}/named`, ...FAST, '--deny-private'], { timeoutMs: 15_000 });
      assert.equal(denied.code, 5, denied.stderr);
      assert.equal(local.total, 0, 'a request reached the loopback server');
      // The same crawl without --deny-private reaches it: the name does lead there.
      const allowed = await runCli(['crawl', url, '--data', `${data.path}/named-allowed`, ...FAST], { timeoutMs: 15_000 });
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.equal(local.count(`${local.hosts[0]!.origin}/`), 1);
    } finally {
      await local.close();
    }
  });

  test('its URL gets a final PRIVATE_ADDRESS errs record', async () => {
    const e = await readJson<ErrsRecord>(data.path, filesOf(site.url(0, '/')).errs);
    assert.equal(e.code, 'PRIVATE_ADDRESS');
    assert.equal(e.final, true);
  });
});
