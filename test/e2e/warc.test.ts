import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { appendFile, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite } from '../../src/site/generated-site.js';
import type { LoopbackSite } from '../../src/site/site-server.js';
import type { ErrsRecord, LinksRecord } from '../../src/store/records.js';
import { surt } from '../../src/warc/surt.js';
import { BIN, FAST, runCli, spawnCli, tempDir } from '../support/cli.js';
import { listFiles, readJson } from '../support/data-files.js';
import { startTestSite } from '../support/test-site.js';
import { until } from '../support/until.js';
import { checkWarcDir, parseWarcFile, responsePairs } from '../support/warc-check.js';
import { FAR, leftOpen } from '../support/warc-left-open.js';

const execFileAsync = promisify(execFile);

/** `url status` of every links record and of every errs record that has a status. */
async function recordPairs(data: string): Promise<{ pairs: Set<string>; links: LinksRecord[] }> {
  const pairs = new Set<string>();
  const links: LinksRecord[] = [];
  for (const f of await listFiles(data)) {
    if (f.split('/').pop()!.startsWith('.')) continue;
    if (f.startsWith('links/')) {
      const r = await readJson<LinksRecord>(data, f);
      links.push(r);
      pairs.add(`${r.url} ${r.status}`);
    } else if (f.startsWith('errs/')) {
      const r = await readJson<ErrsRecord>(data, f);
      if (r.status !== undefined) pairs.add(`${r.url} ${r.status}`);
    }
  }
  return { pairs, links };
}

describe('crawl --warc', () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };
  let run: Awaited<ReturnType<typeof runCli>>;

  before(async () => {
    site = await startTestSite();
    data = await tempDir();
    run = await runCli(['crawl', site.url(0, '/'), site.url(1, '/'), '--data', data.path, '--warc', ...FAST]);
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('every record re-parses, digests verify, pairs are complete, the CDXJ points at each response', async () => {
    assert.equal(run.code, 0, run.stderr);
    const set = await checkWarcDir(join(data.path, 'warc'));
    assert.equal(set.files.length, 1, 'one node, one file');
    assert.ok(set.responses.length >= 20, `${set.responses.length} responses`);
    assert.equal(set.requests.length, set.responses.length);
  });

  test('the (URL, status) pairs of the WARC are those of the links and errs records (robots.txt aside)', async () => {
    const set = await checkWarcDir(join(data.path, 'warc'));
    const warc = [...responsePairs(set)].filter((p) => !p.includes('/robots.txt ')).sort();
    const { pairs } = await recordPairs(data.path);
    assert.deepEqual(warc, [...pairs].sort());
    // Redirects and error statuses are recorded too.
    assert.ok(warc.includes(`${site.url(0, '/redirect/1')} 301`));
    assert.ok(warc.includes(`${site.url(0, '/missing')} 404`));
    assert.ok(responsePairs(set).has(`${site.url(0, '/robots.txt')} 404`));
  });

  test('warcio (a second implementation) indexes each file as its CDXJ says, but for the key: the SURT pywb computes', async () => {
    const warcDir = join(data.path, 'warc');
    const cli = join(dirname(BIN), '..', 'node_modules', 'warcio', 'dist', 'cli.js');
    for (const name of (await readdir(warcDir)).filter((n) => n.endsWith('.warc.gz'))) {
      const theirs = execFileSync(process.execPath, [cli, 'cdx-index', join(warcDir, name)], { encoding: 'utf8' });
      const ours = await readFile(join(warcDir, name.replace(/\.warc\.gz$/, '.cdxj')), 'utf8');
      // warcio.js keys `/dir/` as `)/dir/`; pywb looks up `)/dir` (docs/warc.md, test/unit/warc/surt.test.ts).
      const key = (l: string): string => {
        const j = JSON.parse(l.slice(l.indexOf('{'))) as Record<string, string>;
        return `${surt(j.url)} ${l.split(' ')[1]} ${j.url} ${j.status} ${j.mime} ${j.digest} ${j.offset} ${j.length}`;
      };
      const lines = (t: string): string[] =>
        t
          .split('\n')
          .filter((l) => l !== '')
          .map(key)
          .sort();
      assert.deepEqual(lines(ours), lines(theirs));
      for (const l of ours.split('\n').filter((x) => x !== '')) {
        const j = JSON.parse(l.slice(l.indexOf('{'))) as Record<string, string>;
        assert.equal(l.split(' ')[0], surt(j.url), `the key of ${j.url}`);
      }
    }
  });

  test("Debian's wget --warc-file on the same site: the same URLs with the same statuses, but for known differences", async (t) => {
    if (!existsSync('/usr/bin/wget')) return t.skip('/usr/bin/wget is not installed (.ci/run installs it)');
    const work = await tempDir();
    try {
      // Exit code 8: some answers were errors (the 404s), as expected.
      const code = await execFileAsync(
        '/usr/bin/wget',
        [
          '--recursive',
          '--level=inf',
          '--quiet',
          '--warc-file=site',
          '--no-warc-keep-log',
          '--delete-after',
          '--no-directories',
          site.url(0, '/'),
          site.url(1, '/'),
        ],
        { cwd: work.path },
      ).then(
        () => 0,
        (err: { code?: number }) => err.code,
      );
      assert.ok(code === 0 || code === 8, `wget exited with ${code}`);
      const theirs = new Set(
        parseWarcFile(await readFile(join(work.path, 'site.warc.gz')))
          .records.filter((r) => r.headers.get('warc-type') === 'response')
          .map((r) => `${r.headers.get('warc-target-uri')!.replace(/^<|>$/g, '')} ${r.http!.firstLine.split(' ')[1]}`),
      );
      const ours = responsePairs(await checkWarcDir(join(data.path, 'warc')));
      const h0 = (p: string): string => site.url(0, p);
      // What differs, and why: each is a choice of mountcrawl's (docs/url-keys.md, docs/errors.md) or a limit of wget's.
      assert.deepEqual(
        [...theirs]
          .filter((p) => !ours.has(p))
          .map((p) => p.slice(0, 60))
          .sort(),
        [
          `${h0('/%93%FA%96%7B%8C%EA.html')} 404`, // wget ignores <meta charset="Shift_JIS">: it escapes the raw bytes
          `${h0('/a.html?sid=12345')} 404`, // mountcrawl strips session parameters
          `${h0('/very-long?q=')}${'x'.repeat(60 - h0('/very-long?q=').length)}`, // longer than --max-url-length
        ],
      );
      assert.deepEqual([...ours].filter((p) => !theirs.has(p)).sort(), [
        `${h0('/%E6%97%A5%E6%9C%AC%E8%AA%9E.html')} 200`, // the Shift_JIS link, decoded and UTF-8 escaped
        `${h0('/from-gzip.html')} 200`, // wget does not read links in a gzip-encoded page
      ]);
    } finally {
      await work.cleanup();
    }
  });

  test('a gzip-encoded page is stored decoded, the original encoding kept as X-Archive-Orig-', async () => {
    const set = await checkWarcDir(join(data.path, 'warc'));
    const r = set.responses.find((x) => x.headers.get('warc-target-uri') === site.url(0, '/gzip.html'))!;
    assert.ok(r.http!.payload.toString().includes('<h1>gzip</h1>'));
    assert.ok(
      r.http!.headers.some(([k, v]) => k === 'X-Archive-Orig-content-encoding' && v === 'gzip'),
      JSON.stringify(r.http!.headers),
    );
    const html = await readFile(join(data.path, 'html', (await listFiles(join(data.path, 'html')))[0]!)).catch(() => undefined);
    assert.ok(html !== undefined);
  });

  test('--warc-max-size rotates files: each has its warcinfo and its index, all closed', async () => {
    const small = await tempDir();
    try {
      const r = await runCli(['crawl', site.url(0, '/'), '--data', small.path, '--warc', '--warc-max-size', '4k', ...FAST]);
      assert.equal(r.code, 0, r.stderr);
      const set = await checkWarcDir(join(small.path, 'warc'));
      assert.ok(set.files.length >= 3, `${set.files.length} files`);
      assert.deepEqual([...set.files].sort(), set.files, 'names sort by time');
      const names = await readdir(join(small.path, 'warc'));
      assert.equal(names.filter((n) => n.endsWith('.cdxj')).length, set.files.length);
    } finally {
      await small.cleanup();
    }
  });
});

describe('crawl --warc killed with SIGKILL', { timeout: 120_000 }, () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    site = await startGeneratedSite({ hosts: 2, pagesPerHost: 150, linksPerPage: 3, latencyMs: 10 });
    data = await tempDir();
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('complete records stay readable, the next run cuts the torn one off and closes the file, nothing is lost', async () => {
    const seeds = site.hosts.map((h) => `${h.origin}/`);
    const args = ['crawl', ...seeds, '--data', data.path, '--warc', '--per-host', '2', ...FAST];
    const child = spawnCli(args);
    const warcDir = join(data.path, 'warc');
    const openFile = async (): Promise<string | undefined> => (await readdir(warcDir).catch(() => [])).find((n) => n.endsWith('.open'));
    await until(async () => {
      const name = await openFile();
      if (name === undefined) return false;
      const cdx = await readFile(join(warcDir, name.replace(/\.warc\.gz\.open$/, '.cdxj')), 'utf8').catch(() => '');
      return cdx.split('\n').length > 30;
    });
    child.kill('SIGKILL');
    await child.done;
    const name = (await openFile())!;
    assert.ok(name !== undefined, 'the killed node left its file open');
    // Whatever the kill left, every complete record reads and the index points inside the file.
    const before = await checkWarcDir(warcDir, { allowOpen: true, allowTail: true });
    assert.ok(before.responses.length >= 30, `${before.responses.length} responses`);
    // A torn last record, as a kill in the middle of a write leaves it.
    const torn = gzipSync(Buffer.from(`WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(5000)}`));
    await appendFile(join(warcDir, name), torn.subarray(0, Math.floor(torn.length / 2)));
    assert.ok(parseWarcFile(await readFile(join(warcDir, name))).tail > 0);

    const again = await runCli(args);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /warc: closed .* left open by node .*a torn last record of \d+ bytes cut off/);
    const after = await checkWarcDir(warcDir);
    assert.ok(after.files.includes(name.replace(/\.open$/, '')), 'the killed node file is closed under its final name');
    // Nothing lost: every page of the site is committed, and every commit is in a WARC file.
    const { pairs, links } = await recordPairs(data.path);
    assert.equal(links.length, 300);
    const warc = responsePairs(after);
    for (const p of pairs) assert.ok(warc.has(p), `${p} missing from the WARC files`);
  });
});

describe('crawl --warc: a file left open by a node that died on another machine', { timeout: 120_000 }, () => {
  let site: LoopbackSite;
  let data: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    site = await startTestSite();
    data = await tempDir();
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test("a node of this machine closes it once the dead node's heartbeat is stale; a live writer's file is left alone", async () => {
    const node = spawnCli(['crawl', site.url(0, '/'), '--data', data.path, '--warc', '--watch', ...FAST, '--dead-after', '3000']);
    const warcDir = join(data.path, 'warc');
    await until(async () => existsSync(join(data.path, 'nodes')) && existsSync(warcDir), 60_000);
    // ws9 died on another machine: its record stays, its counter never moves again.
    // ws8 runs on another machine: the test beats for it.
    const record = (id: string, counter: number): string =>
      JSON.stringify({
        id,
        counter,
        state: 'crawling',
        idleEpoch: 0,
        ...FAR,
        heartbeatMs: 100,
        startedAt: '',
        updatedAt: '',
        round: 0,
        hostsOwned: 0,
        pages: 0,
        errors: 0,
        queued: 0,
        inFlight: 0,
        rate: 0,
      });
    await writeFile(join(data.path, 'nodes', 'ws9.json'), record('ws9', 7));
    let counter = 0;
    let beating = true;
    const beat = async (): Promise<void> => {
      const tmp = join(data.path, 'nodes', `.ws8-beat-${counter}`);
      await writeFile(tmp, record('ws8', ++counter));
      await rename(tmp, join(data.path, 'nodes', 'ws8.json'));
    };
    await beat();
    const beats = (async () => {
      while (beating) {
        await beat();
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      const dead = await leftOpen(warcDir, 'ws9', 0);
      const live = await leftOpen(warcDir, 'ws8', 0);
      const liveBytes = await readFile(join(warcDir, `${live}.open`));
      const said = new RegExp(`warc: closed ${dead} left open by node ws9: 5 records kept, a torn last record of \\d+ bytes cut off`);
      await until(async () => said.test(node.stderrSoFar()), 60_000);
      assert.ok(existsSync(join(warcDir, dead)), 'closed under its final name');
      assert.deepEqual(await readFile(join(warcDir, `${live}.open`)), liveBytes, "the live writer's file is untouched");
    } finally {
      beating = false;
      await beats;
    }
    node.kill('SIGINT');
    const r = await node.done;
    assert.equal(r.code, 130, r.stderr);
    const names = await readdir(warcDir);
    for (const n of names.filter((x) => x.includes('-ws8-'))) await rm(join(warcDir, n));
    const set = await checkWarcDir(warcDir);
    assert.ok(set.files.length >= 2, "the repaired file and the node's own");
  });
});
