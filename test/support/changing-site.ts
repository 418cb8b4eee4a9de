import { createHash } from 'node:crypto';
import { LoopbackSite, type Handler } from '../../src/site/site-server.js';

/**
 * A one-host site whose pages change between passes (docs/recrawl.md, the recrawl test):
 * `/p/0` ... `/p/N-1`, each linking to the next two, with a body of a few KiB. Pages whose
 * number is even send an ETag, odd ones a Last-Modified; `/p/0` (the seed) sends neither, so
 * a revisit of it costs its body and is judged by its content signature. Conditional
 * requests are answered with 304 when the validator still matches. `bump(i)` changes page i
 * (a new version: new body, new validators), and a bumped page i links to `/new/i`, so a changed page's new links are followed. Counts the body bytes sent.
 */
/**
 * Flags for crawls of a ChangingSite. Its deepest page is at depth ceil((N-1)/2) by the
 * shortest path, but a URL keeps the depth of the link it was first found by, and pages
 * fetched in parallel finish in any order: page i+1 (one hop deeper) may be fetched before
 * page i and give page i+2 a depth one too many, and that excess adds up along the chain.
 * With 40 pages the deepest page sat exactly at the default --max-depth 20, and a crawl on
 * a loaded machine left it out (seen in CI). The tests are about revisits, not depth.
 */
export const CHANGING_SITE_FLAGS: readonly string[] = ['--max-depth', '1000'];

export class ChangingSite {
  readonly site: LoopbackSite;
  readonly pages: number;
  readonly #versions: number[];
  /** Pages answering an error status instead of their body. */
  readonly failing = new Map<number, number>();
  /** Body bytes sent (all responses). */
  bodyBytes = 0;
  /** 304 answers sent. */
  notModified = 0;

  private constructor(site: LoopbackSite, pages: number, versions: number[]) {
    this.site = site;
    this.pages = pages;
    this.#versions = versions;
  }

  static async start(pages: number): Promise<ChangingSite> {
    const versions = new Array<number>(pages).fill(0);
    let self: ChangingSite | undefined;
    const handle: Handler = (req, res, _host, path) => {
      if (path === '/robots.txt') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return void res.end();
      }
      const m = /^\/(p|new)\/(\d+)$/.exec(path);
      const i = m === null ? -1 : Number(m[2]);
      if (m === null || i >= pages) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return void res.end();
      }
      const failWith = m[1] === 'p' ? self!.failing.get(i) : undefined;
      if (failWith !== undefined) {
        res.writeHead(failWith, { 'content-type': 'text/plain' });
        return void res.end('failing on purpose');
      }
      const version = m[1] === 'new' ? 0 : versions[i]!;
      const links = m[1] === 'new' ? [] : [i + 1, i + 2].filter((n) => n < pages).map((n) => `/p/${n}`);
      if (m[1] === 'p' && version > 0) links.push(`/new/${i}`);
      const body = Buffer.from(
        `<!DOCTYPE html><html><head><title>${path} v${version}</title></head><body>${links
          .map((l) => `<a href="${l}">${l}</a>`)
          .join('\n')}<p>${`page ${path} version ${version}. `.repeat(100)}</p></body></html>`,
      );
      const etag = `"${createHash('md5').update(body).digest('hex')}"`;
      const lastModified = new Date(Date.UTC(2026, 0, 1) + version * 86_400_000).toUTCString();
      const validators: Record<string, string> = {};
      if (m[1] === 'p' && i > 0 && i % 2 === 0) validators.etag = etag;
      if (m[1] === 'p' && i % 2 === 1) validators['last-modified'] = lastModified;
      const inm = req.headers['if-none-match'];
      const ims = req.headers['if-modified-since'];
      const fresh =
        (validators.etag !== undefined && inm === validators.etag) ||
        (validators['last-modified'] !== undefined && inm === undefined && ims === validators['last-modified']);
      if (fresh) {
        self!.notModified++;
        res.writeHead(304, validators);
        return void res.end();
      }
      self!.bodyBytes += body.length;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, ...validators });
      res.end(body);
    };
    const site = await LoopbackSite.start({ hosts: 1, handle });
    self = new ChangingSite(site, pages, versions);
    return self;
  }

  url(path: string): string {
    return this.site.url(0, path);
  }

  /** Changes page i: a new body and new validators. */
  bump(i: number): void {
    this.#versions[i]!++;
  }

  async close(): Promise<void> {
    await this.site.close();
  }
}
