import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { page, pageRoute, redirectRoute, sendHtml, sleep, startRoutedSite, type HostRoutes, type Route } from './routed-site.js';

/**
 * The hostile part of the suite's site (docs/architecture.md, "Tests"): responses the real web sends that a
 * crawler must survive. Each route is a factory so tests can mount it where they need it;
 * `startHostileSite` puts them all on four hosts.
 */

/** The first bytes of a PNG file, then more binary. */
export const PNG_BYTES = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]),
  Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37) & 0xff)),
]);

/**
 * A host name that cannot resolve and whose lookup never leaves the machine: `.invalid` is
 * reserved (RFC 6761) but glibc would still ask the configured name server; a first label of
 * 64 characters is longer than DNS allows (63), so the resolver fails before building a query.
 */
export const UNRESOLVABLE_HOST = `${'a'.repeat(64)}.invalid`;

/** Hosts whose names must never become directories (host-dir.ts refuses them). */
export const UNSAFE_HOST_URLS = ['http://a!b.example/', 'http://../x', 'http://.hidden/', `http://${'h'.repeat(200)}/`, 'http://a~b/'];

/** Drips one byte a second after the headers, until the client goes away. Records each request's life. */
export function dripRoute(log: { start: number; end?: number }[]): Route {
  return (_req, res) => {
    const entry: { start: number; end?: number } = { start: performance.now() };
    log.push(entry);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write('<html><body>');
    const timer = setInterval(() => res.write('.'), 1_000);
    res.on('close', () => {
      clearInterval(timer);
      entry.end = performance.now();
    });
  };
}

/** Writes `total` bytes of HTML in 64 KiB chunks (first a link, last another one), minding back pressure. */
export function hugeRoute(total: number, firstLink: string, lastLink: string): Route {
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': total });
    const head = Buffer.from(`<html><body><a href="${firstLink}">first</a>\n`);
    const tail = Buffer.from(`<a href="${lastLink}">last</a></body></html>\n`);
    const filler = Buffer.alloc(64 * 1024, '<p>filler</p>\n');
    let sent = 0;
    const write = (b: Buffer): Promise<void> | undefined => {
      sent += b.length;
      if (res.write(b)) return undefined;
      return new Promise((resolve) => {
        const go = (): void => {
          res.off('drain', go);
          res.off('close', go);
          resolve();
        };
        res.on('drain', go);
        res.on('close', go);
      });
    };
    await write(head);
    while (!res.destroyed && sent + filler.length < total - tail.length) await write(filler);
    if (res.destroyed) return;
    await write(filler.subarray(0, total - tail.length - sent));
    res.end(tail);
  };
}

/**
 * A gzip bomb: `mebibytes` MiB of spaces after a link, as concatenated gzip members (one
 * compressed MiB repeated), about 1 KiB on the wire per decoded MiB.
 */
export function gzipBombRoute(mebibytes: number, link: string): Route {
  const head = gzipSync(Buffer.from(`<html><body><a href="${link}">bomb</a>`));
  const mib = gzipSync(Buffer.alloc(1024 * 1024, ' '), { level: 9 });
  const body = Buffer.concat([head, ...Array.from({ length: mebibytes }, () => mib)]);
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': body.length });
    res.end(body);
  };
}

/** Serves `bytes` as text/html without a charset. */
export function bytesRoute(bytes: Buffer, contentType = 'text/html'): Route {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': contentType, 'content-length': bytes.length });
    res.end(bytes);
  };
}

/** An undeclared windows-1252 page whose link has `é` as the single byte 0xE9. */
export const LATIN1_PAGE = Buffer.concat([
  Buffer.from('<html><head><title>caf'),
  Buffer.from([0xe9]),
  Buffer.from('</title></head><body><a href="/caf'),
  Buffer.from([0xe9]),
  Buffer.from('.html">caf'),
  Buffer.from([0xe9]),
  Buffer.from('</a></body></html>'),
]);

/** Tag soup: unclosed tags, unquoted and single-quoted attributes, upper case, newlines in a tag. */
export const MALFORMED_PAGE =
  "<html><body><div><p>one <a href=/mal/1.html>one<a href='/mal/2.html'>two<b><a href=/mal/3.html class=x>three" +
  '</div></span><table><tr><td><a\nhref="/mal/4.html"\n>four<p><A HREF=/mal/5.html>five<li>six';

/** Declares more bytes than it sends, then closes the connection. */
export function shortBodyRoute(): Route {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': 5000 });
    res.write('<html><body><a href="/never-complete.html">x</a>', () => res.socket?.end());
  };
}

/** Sends part of a body, then resets the connection. */
export function resetRoute(): Route {
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write(`<html><body>${'<p>partial</p>'.repeat(100)}`);
    await sleep(50);
    res.socket?.destroy();
  };
}

/** What the hostile site records besides the request counters. */
export interface HostileLog {
  /** Each request of the dripping page: when it came and when its connection closed. */
  readonly drips: { start: number; end?: number }[];
}

export const HUGE_BYTES = 20 * 1024 * 1024;
export const BOMB_MIB = 512;

/**
 * Four hosts: 0 hostile pages (all linked from `/`), 1 a page that drips forever, 2 a quick
 * host, 3 broken connections (a short body, a reset).
 */
export async function startHostileSite(): Promise<{ site: LoopbackSite; log: HostileLog }> {
  const log: HostileLog = { drips: [] };
  const main: HostRoutes = {
    '/': pageRoute([
      '/huge.html',
      '/bomb.html',
      '/image.html',
      '/latin.html',
      '/malformed.html',
      '/loop-a',
      '/chain/1',
      '/redir-unsafe',
      '/not-gzip.html',
      '/base-js.html',
      ...UNSAFE_HOST_URLS,
      `http://${UNRESOLVABLE_HOST}/`,
    ]),
    '/huge.html': hugeRoute(HUGE_BYTES, '/from-huge.html', '/after-cut.html'),
    '/bomb.html': gzipBombRoute(BOMB_MIB, '/from-bomb.html'),
    '/image.html': bytesRoute(PNG_BYTES),
    '/latin.html': bytesRoute(LATIN1_PAGE),
    '/malformed.html': bytesRoute(Buffer.from(MALFORMED_PAGE)),
    '/loop-a': redirectRoute('/loop-b'),
    '/loop-b': redirectRoute('/loop-a'),
    '/chain/*': (req, res, ctx) => redirectRoute(`/chain/${Number(ctx.path.slice(7)) + 1}`)(req, res, ctx),
    '/redir-unsafe': redirectRoute('http://a$b.example/'),
    '/not-gzip.html': (_req, res) => {
      const body = Buffer.from('<html><body>this is not gzip</body></html>');
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': body.length });
      res.end(body);
    },
    '/from-huge.html': pageRoute(),
    '/after-cut.html': pageRoute(),
    '/from-bomb.html': pageRoute(),
    '/caf%C3%A9.html': pageRoute(),
    '/mal/*': pageRoute(),
    '/base-js.html': bytesRoute(Buffer.from('<html><head><base href="javascript:void(0)"></head><body><a href="from-base-js.html">x</a>')),
    '/from-base-js.html': pageRoute(),
  };
  const quick: HostRoutes = {
    '/': pageRoute(['/q/a.html', '/q/b.html', '/q/c.html', '/q/d.html']),
    '/q/*': pageRoute(),
  };
  const broken: HostRoutes = {
    '/': pageRoute(['/short-body.html', '/reset.html']),
    '/short-body.html': shortBodyRoute(),
    '/reset.html': resetRoute(),
  };
  const site = await startRoutedSite([main, { '/': dripRoute(log.drips) }, quick, broken]);
  return { site, log };
}

/** A key and self-signed certificate for `address`, made with openssl; undefined without openssl. */
export function selfSignedCertificate(address: string): { key: Buffer; cert: Buffer } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'mountcrawl-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        `/CN=${address}`,
        '-addext',
        `subjectAltName=IP:${address}`,
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An https host on one loopback address with a given certificate; counts requests by path. */
export interface HttpsHost {
  readonly origin: string;
  readonly hostDir: string;
  readonly counts: Map<string, number>;
  close(): Promise<void>;
}

/** Starts an https server on `address` (port 0) serving `routes`. */
export async function startHttpsHost(
  address: string,
  tls: { key: Buffer; cert: Buffer },
  routes: Record<string, string[]>,
): Promise<HttpsHost> {
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = createHttpsServer(tls, (req, res) => {
    const path = req.url ?? '/';
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const links = routes[path];
    if (links === undefined) {
      res.writeHead(404, { 'content-length': 0 });
      return void res.end();
    }
    sendHtml(res, page(path, links));
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://${address}:${port}`,
    hostDir: `${address}_${port}`,
    counts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
