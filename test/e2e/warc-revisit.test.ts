import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { WARCParser } from 'warcio';
import { CHANGING_SITE_FLAGS, ChangingSite } from '../support/changing-site.js';
import { BIN, FAST, runCli, tempDir } from '../support/cli.js';
import { surt } from '../../src/warc/surt.js';
import { checkWarcDir, parseRecord } from '../support/warc-check.js';

const PAGES = 20;
const PROFILE = 'http://netpreserve.org/warc/1.1/revisit/server-not-modified';

describe('crawl --warc --recrawl-after: a 304 is a revisit record (docs/warc.md)', { timeout: 120_000 }, () => {
  let site: ChangingSite;
  let data: { path: string; cleanup: () => Promise<void> };
  const warcDir = (): string => join(data.path, 'warc');

  before(async () => {
    site = await ChangingSite.start(PAGES);
    data = await tempDir();
    const crawl = (extra: string[]): ReturnType<typeof runCli> =>
      runCli(['crawl', site.url('/p/0'), '--data', data.path, ...CHANGING_SITE_FLAGS, '--warc', ...FAST, ...extra]);
    const first = await crawl([]);
    assert.equal(first.code, 0, first.stderr);
    const second = await crawl(['--recrawl-after', '0s']);
    assert.equal(second.code, 0, second.stderr);
    assert.ok(site.notModified >= PAGES - 1, `only ${site.notModified} answers were 304`);
  });
  after(async () => {
    await site.close();
    await data.cleanup();
  });

  test('every 304 has a revisit record (server-not-modified) referring to the capture it confirms, and its request record', async () => {
    const set = await checkWarcDir(warcDir()); // digests, pairs with requests, CDXJ lines
    assert.equal(set.revisits.length, site.notModified, 'one revisit record per 304');
    for (const v of set.revisits) {
      const url = v.headers.get('warc-target-uri')!;
      assert.equal(v.headers.get('warc-refers-to-target-uri'), url);
      const refersTo = Date.parse(v.headers.get('warc-refers-to-date')!);
      // The capture confirmed: a response of the same URL whose WARC-Date is exactly the
      // revisit's WARC-Refers-To-Date (WARC 1.1, 5.13; wabac.js looks it up to the millisecond).
      const original = set.responses.find(
        (r) =>
          r.headers.get('warc-type') === 'response' &&
          r.headers.get('warc-target-uri') === url &&
          r.headers.get('warc-date') === v.headers.get('warc-refers-to-date'),
      );
      assert.ok(original !== undefined, `${url}: no response record of WARC-Date ${v.headers.get('warc-refers-to-date')}`);
      assert.match(original.http!.firstLine, /^HTTP\/1\.1 200 /);
      assert.ok(refersTo <= Date.parse(v.headers.get('warc-date')!));
      const request = set.requests.find((q) => q.headers.get('warc-concurrent-to') === v.headers.get('warc-record-id'));
      assert.ok(request !== undefined, `${url}: no request record`);
      assert.ok(
        request.http!.headers.some(([k]) => /^if-(none-match|modified-since)$/i.test(k)),
        'the request was conditional',
      );
    }
  });

  test("pywb's resolution, from the CDXJ lines and the revisit's fields, replays every revisited page with its content", async () => {
    // pywb (docs/warc.md): the revisit's line is `warc/revisit`; its block has no HTTP head (a
    // 3xx one is replayed as an empty redirect, and any head would be replayed instead of the
    // original's); the original is the line of the key of WARC-Refers-To-Target-URI, not a
    // revisit (of the revisit's digest when its line has one), closest to WARC-Refers-To-Date.
    const set = await checkWarcDir(warcDir());
    const index: Record<string, string>[] = [];
    for (const name of (await readdir(warcDir())).filter((n) => n.endsWith('.cdxj'))) {
      for (const l of (await readFile(join(warcDir(), name), 'utf8')).split('\n').filter((x) => x !== '')) {
        index.push({ ...(JSON.parse(l.slice(l.indexOf('{'))) as Record<string, string>), key: l.split(' ')[0]!, ts: l.split(' ')[1]! });
      }
    }
    assert.ok(set.revisits.length > 0);
    for (const v of set.revisits) {
      const url = v.headers.get('warc-target-uri')!;
      const line = index.find((l) => l.url === url && l.mime === 'warc/revisit' && Number(l.offset) === v.offset);
      assert.ok(line !== undefined, `${url}: the revisit's index line`);
      // No HTTP head: not a 3xx (replayed as an empty redirect), and the original's head is replayed.
      assert.equal(v.block.length, 0);
      const at = Number(
        v.headers
          .get('warc-refers-to-date')!
          .replace(/[^0-9]/g, '')
          .slice(0, 14),
      );
      const key = surt(v.headers.get('warc-refers-to-target-uri')!);
      const [original] = index
        .filter((l) => l.key === key && l.mime !== 'warc/revisit' && (line.digest === undefined || l.digest === line.digest))
        .sort((a, b) => Math.abs(Number(a.ts) - at) - Math.abs(Number(b.ts) - at));
      assert.ok(original !== undefined, `${url}: pywb finds no original`);
      const offset = Number(original.offset);
      const bytes = await readFile(join(warcDir(), original.filename!));
      const record = parseRecord(gunzipSync(bytes.subarray(offset, offset + Number(original.length))), offset, Number(original.length));
      assert.ok(record !== undefined);
      assert.equal(record.headers.get('warc-type'), 'response');
      assert.equal(record.headers.get('warc-date'), v.headers.get('warc-refers-to-date'), `${url}: resolved to the capture named`);
      assert.match(record.http!.firstLine, /^HTTP\/1\.1 200 /);
      assert.ok(record.http!.payload.length > 0, `${url}: replayed with its content`);
    }
  });

  test('warcio (the library the project uses) reads the revisits and indexes them as the CDXJ does', async () => {
    const cli = join(dirname(BIN), '..', 'node_modules', 'warcio', 'dist', 'cli.js');
    let revisits = 0;
    for (const name of (await readdir(warcDir())).filter((n) => n.endsWith('.warc.gz'))) {
      for await (const record of new WARCParser(createReadStream(join(warcDir(), name)))) {
        if (record.warcType !== 'revisit') continue;
        revisits++;
        assert.equal(record.warcHeader('WARC-Profile'), PROFILE);
        // The block is empty: replay takes the capture's head (pywb replays a 3xx revisit as an
        // empty redirect); the server's 304 is kept in a WARC field.
        assert.equal(record.httpHeaders, null);
        assert.equal(record.warcContentLength, 0);
        assert.equal(record.warcHeader('WARC-Mountcrawl-Server-Response'), 'HTTP/1.1 304 Not Modified');
        assert.equal(record.warcRefersToTargetURI, record.warcTargetURI);
        assert.ok(record.warcRefersToDate !== undefined && record.warcRefersToDate !== null);
      }
      const theirs = execFileSync(process.execPath, [cli, 'cdx-index', join(warcDir(), name)], { encoding: 'utf8' });
      const ours = await readFile(join(warcDir(), name.replace(/\.warc\.gz$/, '.cdxj')), 'utf8');
      const lines = (t: string): string[] =>
        t
          .split('\n')
          .filter((l) => l !== '')
          .sort();
      // But for the key (docs/warc.md): the SURT pywb computes, not warcio.js's.
      const parsed = (t: string, theirs: boolean): string[] =>
        lines(t)
          .map((l) => {
            const j = JSON.parse(l.slice(l.indexOf('{'))) as Record<string, string>;
            if (!theirs) assert.equal(l.split(' ')[0], surt(j.url!), `the key of ${j.url}`);
            return `${surt(j.url!)} ${l.split(' ')[1]} ${JSON.stringify(j, Object.keys(j).sort())}`;
          })
          .sort();
      assert.deepEqual(parsed(ours, false), parsed(theirs, true), `${name}: our index is warcio's`);
    }
    assert.equal(revisits, site.notModified);
  });
});
