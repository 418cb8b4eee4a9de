import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { test } from 'node:test';
import { parseSitemap } from '../../../src/sitemap/sitemap-parser.js';

/** A body delivered in small chunks, as a network stream would. */
function body(data: string | Buffer, chunk = 7): Readable {
  const b = Buffer.isBuffer(data) ? data : Buffer.from(data);
  const parts: Buffer[] = [];
  for (let i = 0; i < b.length; i += chunk) parts.push(b.subarray(i, i + chunk));
  return Readable.from(parts);
}

const URLSET = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://127.0.0.2/a?x=1&amp;y=2</loc><lastmod>2026-11-20</lastmod></url>
  <url><loc> http://127.0.0.2/b </loc><lastmod>not a date</lastmod></url>
  <url><lastmod>2026-11-20</lastmod></url>
</urlset>`;

test('a urlset: locations (entities decoded, trimmed) and lastmod; an entry without loc is skipped', async () => {
  const r = await parseSitemap(body(URLSET));
  assert.equal(r.error, undefined);
  assert.deepEqual(r.entries, [
    { kind: 'page', loc: 'http://127.0.0.2/a?x=1&y=2', lastmodMs: Date.parse('2026-11-20') },
    { kind: 'page', loc: 'http://127.0.0.2/b' },
  ]);
});

test('a sitemap index lists sitemaps, gzipped or not', async () => {
  const index = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://127.0.0.2/s1.xml.gz</loc><lastmod>2026-11-01T10:00:00Z</lastmod></sitemap></sitemapindex>`;
  for (const b of [Buffer.from(index), gzipSync(index)]) {
    const r = await parseSitemap(body(b, 5));
    assert.deepEqual(r.entries, [{ kind: 'sitemap', loc: 'http://127.0.0.2/s1.xml.gz', lastmodMs: Date.parse('2026-11-01T10:00:00Z') }]);
  }
});

test('a plain-text sitemap: one URL a line, other lines ignored', async () => {
  const r = await parseSitemap(body('http://127.0.0.2/a\r\n\n# no\nftp://x/y\nhttps://127.0.0.2/b'));
  assert.deepEqual(
    r.entries.map((e) => e.loc),
    ['http://127.0.0.2/a', 'https://127.0.0.2/b'],
  );
});

test('caps: entries beyond maxEntries are counted, not kept; bytes beyond maxBytes are not read', async () => {
  const many = `<urlset>${Array.from({ length: 100 }, (_, i) => `<url><loc>http://127.0.0.2/${i}</loc></url>`).join('')}</urlset>`;
  const r = await parseSitemap(body(many, 50), { maxEntries: 10 });
  assert.equal(r.entries.length, 10);
  assert.ok(r.dropped > 0);
  const big = await parseSitemap(body(many, 50), { maxBytes: 200 });
  assert.match(big.error!, /larger than 200 bytes/);
  assert.ok(big.entries.length < 100);
});

test('malformed: not a sitemap, empty, a broken gzip: one error, never a throw', async () => {
  assert.match((await parseSitemap(body('<html><body>hi</body></html>'))).error!, /not a sitemap \(root element <html>\)/);
  assert.equal((await parseSitemap(body(''))).error, 'empty sitemap');
  const broken = Buffer.concat([gzipSync(URLSET).subarray(0, 30), Buffer.from('garbage')]);
  assert.match((await parseSitemap(body(broken))).error!, /^unreadable: /);
});

test('a character split across chunks stays whole', async () => {
  const r = await parseSitemap(body('<urlset><url><loc>http://127.0.0.2/caf\u00e9-\u65e5\u672c</loc></url></urlset>', 3));
  assert.deepEqual(
    r.entries.map((e) => e.loc),
    ['http://127.0.0.2/caf\u00e9-\u65e5\u672c'],
  );
});

test('feeds: RSS 2.0 items (link, pubDate), RSS 1.0 items and Atom entries (alternate link href, updated) are pages', async () => {
  const rss = await parseSitemap(
    body(
      `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>http://127.0.0.2/</link>
      <item><title>a</title><link>http://127.0.0.2/a?x=1&amp;y=2</link><pubDate>Fri, 20 Nov 2026 10:00:00 GMT</pubDate></item>
      <item><title>no link</title></item></channel></rss>`,
    ),
  );
  assert.equal(rss.error, undefined);
  assert.equal(rss.format, 'rss');
  assert.deepEqual(rss.entries, [{ kind: 'page', loc: 'http://127.0.0.2/a?x=1&y=2', lastmodMs: Date.parse('2026-11-20T10:00:00Z') }]);
  const rdf = await parseSitemap(
    body(
      `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel><link>http://127.0.0.2/</link></channel><item><link>http://127.0.0.2/r</link></item></rdf:RDF>`,
    ),
  );
  assert.equal(rdf.format, 'rdf');
  assert.deepEqual(rdf.entries, [{ kind: 'page', loc: 'http://127.0.0.2/r' }]);
  const atom = await parseSitemap(
    body(
      `<feed xmlns="http://www.w3.org/2005/Atom"><link href="http://127.0.0.2/"/><updated>2026-01-01T00:00:00Z</updated>
      <entry><link rel="edit" href="http://127.0.0.2/edit/1"/><link href="http://127.0.0.2/e/1"/><updated>2026-11-21T00:00:00Z</updated></entry></feed>`,
    ),
  );
  assert.equal(atom.format, 'feed');
  assert.deepEqual(atom.entries, [{ kind: 'page', loc: 'http://127.0.0.2/e/1', lastmodMs: Date.parse('2026-11-21T00:00:00Z') }]);
});

test('the entries kept do not hold the body: a URL cut out of a 1 MiB chunk keeps only itself', async () => {
  // Run in a child with --expose-gc, so that what is measured is what stays reachable.
  const parser = new URL('../../../src/sitemap/sitemap-parser.js', import.meta.url).href;
  const script = `
    import { Readable } from 'node:stream';
    import { parseSitemap } from ${JSON.stringify(parser)};
    const chunks = [Buffer.from('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')];
    for (let i = 0; i < 40; i++) {
      const entry = '<url><loc>http://127.0.0.2/a-page-with-a-path-of-some-length/' + i + '</loc><image>';
      chunks.push(Buffer.from(entry + 'c'.repeat(1024 * 1024 - entry.length - 15) + '</image></url>'));
    }
    chunks.push(Buffer.from('</urlset>'));
    globalThis.gc();
    const before = process.memoryUsage().heapUsed;
    const r = await parseSitemap(Readable.from(chunks.splice(0)));
    globalThis.gc();
    process.stdout.write(JSON.stringify({ entries: r.entries.length, retained: process.memoryUsage().heapUsed - before, keep: r.entries.length }));
  `;
  const { execFileSync } = await import('node:child_process');
  const out = JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' })) as {
    entries: number;
    retained: number;
  };
  assert.equal(out.entries, 40);
  // 40 entries of about 60 characters; holding their chunks would be 40 MiB.
  assert.ok(out.retained < 4 * 1024 * 1024, `${out.retained} bytes still reachable after the parse`);
});
