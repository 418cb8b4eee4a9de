import { gzipSync } from 'node:zlib';
import { LoopbackSite, type Handler, type SiteHost } from '../../src/site/site-server.js';

/**
 * The suite's own web site: three hosts on 127.0.0.2-4 (docs/architecture.md, "Tests"). Host 0 and host 1 are
 * seeds; host 2 is only linked to (out of scope with --scope host). Every spelling of a link
 * that real pages use appears on host 0's home page. See EXPECTED_* for what a complete crawl
 * must fetch, each exactly once.
 */

/** `日本語` in Shift_JIS bytes, and the path it must normalize to (UTF-8 escapes). */
const SJIS_WORD = Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]);
export const SJIS_PATH = '/%E6%97%A5%E6%9C%AC%E8%AA%9E.html';

function html(res: Parameters<Handler>[1], body: string, extra: Record<string, string> = {}): void {
  const bytes = Buffer.from(body);
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': bytes.length, ...extra });
  res.end(bytes);
}

function page(title: string, links: readonly string[]): string {
  return `<!DOCTYPE html><html><head><title>${title}</title></head><body><h1>${title}</h1>${links
    .map((l) => `<a href="${l}">${l.slice(0, 40)}</a>`)
    .join('\n')}</body></html>`;
}

/** Paths of host 0 and host 1 that a complete crawl fetches (robots.txt included). */
export const EXPECTED_HOST0 = [
  '/robots.txt',
  '/',
  '/a.html',
  '/c.html',
  '/d.html',
  '/dir/b.html',
  '/dir/c.html',
  '/redirect/1',
  '/redirect/2',
  '/target.html',
  '/offsite',
  '/missing',
  '/doc.pdf',
  '/gzip.html',
  '/from-gzip.html',
  '/sjis.html',
  SJIS_PATH,
  '/base.html',
  '/based/x.html',
  '/long.html',
];
export const EXPECTED_HOST1 = ['/robots.txt', '/', '/landing.html'];

/** Starts the test site. */
export async function startTestSite(options: { latencyMs?: number } = {}): Promise<LoopbackSite> {
  let hosts: SiteHost[] = [];
  const handle: Handler = (_req, res, host, path) => {
    const h = (i: number): string => hosts[i]!.origin;
    const route = `${host.index}${path}`;
    switch (route) {
      case '0/robots.txt':
      case '1/robots.txt':
      case '2/robots.txt':
        res.writeHead(404, { 'content-type': 'text/plain' });
        return void res.end('no robots here');
      case '0/':
        return html(
          res,
          page('home', [
            'a.html',
            './a.html',
            '/a.html#section',
            'dir/b.html',
            'dir/../a.html',
            '/a.html?sid=12345',
            `${h(0)}/c.html`,
            `//${host.address}:${host.port}/d.html`,
            'mailto:someone@example.com',
            'javascript:void(0)',
            'tel:+123456',
            'data:text/html,hello',
            '#top',
            '',
            '/redirect/1',
            '/offsite',
            '/missing',
            '/doc.pdf',
            '/gzip.html',
            '/sjis.html',
            '/base.html',
            '/long.html',
            `${h(1)}/`,
            `${h(2)}/never.html`,
            `HTTP://${host.address.toUpperCase()}:${host.port}/c.html`,
          ]),
        );
      case '0/a.html':
        return html(res, page('a', ['/', 'dir/b.html']));
      case '0/dir/b.html':
        return html(res, page('b', ['../a.html', 'c.html', '../dir/./c.html']));
      case '0/dir/c.html':
      case '0/c.html':
      case '0/d.html':
      case '0/target.html':
      case '0/from-gzip.html':
      case '0/based/x.html':
      case `0${SJIS_PATH}`:
      case '1/landing.html':
      case '2/never.html':
        return html(res, page(path, []));
      case '0/redirect/1':
        res.writeHead(301, { location: '/redirect/2' });
        return void res.end();
      case '0/redirect/2':
        res.writeHead(302, { location: `${h(0)}/target.html` });
        return void res.end();
      case '0/offsite':
        res.writeHead(302, { location: `${h(1)}/landing.html` });
        return void res.end();
      case '0/missing':
        res.writeHead(404, { 'content-type': 'text/html' });
        return void res.end('<a href="/never-followed.html">not found</a>');
      case '0/doc.pdf':
        res.writeHead(200, { 'content-type': 'application/pdf' });
        return void res.end(Buffer.from('%PDF-1.4 not really'));
      case '0/gzip.html': {
        const body = gzipSync(Buffer.from(page('gzip', ['/from-gzip.html'])));
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': body.length });
        return void res.end(body);
      }
      case '0/sjis.html': {
        // No charset in the header: only the meta tag says Shift_JIS.
        const body = Buffer.concat([
          Buffer.from('<html><head><meta charset="Shift_JIS"><title>sjis</title></head><body><a href="/'),
          SJIS_WORD,
          Buffer.from('.html">'),
          SJIS_WORD,
          Buffer.from('</a></body></html>'),
        ]);
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end(body);
      }
      case '0/base.html':
        return html(res, '<html><head><base href="/based/"></head><body><a href="x.html">x</a></body></html>');
      case '0/long.html':
        return html(res, page('long', [`/very-long?q=${'x'.repeat(9000)}`]));
      case '1/':
        return html(res, page('host1', ['/landing.html', `${h(0)}/`]));
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        return void res.end(`no route ${route}`);
    }
  };
  const site = await LoopbackSite.start({ hosts: 3, ...(options.latencyMs ? { latencyMs: options.latencyMs } : {}), handle });
  hosts = site.hosts;
  return site;
}
