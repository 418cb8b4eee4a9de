import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FAST, runCli, tempDir } from '../support/cli.js';
import { filesOf, listFiles, readJson } from '../support/data-files.js';
import { pageRoute, startRoutedSite, type Route } from '../support/routed-site.js';

const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(2000, 0x41)]);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

function binary(type: string, body: Buffer): Route {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': type, 'content-length': body.length });
    res.end(body);
  };
}

describe('--keep TYPE,...: non-HTML bodies stored in files/', { timeout: 60_000 }, () => {
  test('a kept PDF is stored whole under files/ with the same key and named in its links record; other types are not', async () => {
    const site = await startRoutedSite([
      { '/': pageRoute(['/doc.pdf', '/img.png']), '/doc.pdf': binary('application/pdf', PDF), '/img.png': binary('image/png', PNG) },
    ]);
    const tmp = await tempDir();
    try {
      const data = join(tmp.path, 'd');
      const r = await runCli(['crawl', site.url(0, '/'), '--data', data, ...FAST, '--keep', 'application/pdf']);
      assert.equal(r.code, 0, r.stderr);
      const pdf = filesOf(site.url(0, '/doc.pdf'));
      const rec = await readJson<{ html: string | null; file: string; bytes: number }>(data, pdf.links);
      assert.equal(rec.html, null);
      assert.equal(rec.file, `files/${pdf.hostDir}/${pdf.key}.pdf`);
      assert.deepEqual(await readFile(join(data, rec.file)), PDF);
      const png = await readJson<{ file?: string }>(data, filesOf(site.url(0, '/img.png')).links);
      assert.equal(png.file, undefined);
      assert.deepEqual(
        (await listFiles(data)).filter((f) => f.startsWith('files/')),
        [rec.file],
      );

      // Without --keep (the default) nothing goes to files/.
      const plain = join(tmp.path, 'plain');
      assert.equal((await runCli(['crawl', site.url(0, '/'), '--data', plain, ...FAST])).code, 0);
      assert.deepEqual(
        (await listFiles(plain)).filter((f) => f.startsWith('files/')),
        [],
      );
    } finally {
      await site.close();
      await tmp.cleanup();
    }
  });

  test('a bad --keep value: BAD_OPTION', async () => {
    const r = await runCli(['crawl', 'http://127.0.0.1:9/', '--keep', 'pdf', ...FAST]);
    assert.equal(r.code, 2);
    assert.match(r.stderr.trim(), /^mountcrawl: BAD_OPTION: --keep "pdf": not a media type/);
  });
});
