import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LoopbackSite } from '../../src/site/site-server.js';
import { FAST, runCli, tempDir } from '../support/cli.js';
import { selfSignedCertificate, startHttpsHost } from '../support/hostile-site.js';
import { pageRoute, requestedPaths, startRoutedSite, statusRoute, type Route } from '../support/routed-site.js';

/**
 * A forward HTTP proxy on loopback, recording what it forwards: absolute-form requests
 * (`GET http://host/path`) and CONNECT tunnels (`host:port`, which undici's proxy agents use).
 */
async function startProxy(): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url ?? '');
    const target = new URL(req.url ?? '');
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers: { ...req.headers, 'x-via-test-proxy': '1' },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push(req.url ?? '');
    const [hostname, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), hostname!, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

describe('request controls: --header, --cookie-file, --proxy', { timeout: 90_000 }, () => {
  let site: LoopbackSite;
  let tmp: { path: string; cleanup: () => Promise<void> };
  const received: { path: string; headers: Record<string, string | string[] | undefined> }[] = [];
  const record: Route = (req, res, ctx) => {
    received.push({ path: ctx.path, headers: req.headers });
    return pageRoute(['/a', '/private/b'])(req, res, ctx);
  };
  before(async () => {
    const robots: Route = (req, res, ctx) => {
      received.push({ path: ctx.path, headers: req.headers });
      return statusRoute(404)(req, res, ctx);
    };
    site = await startRoutedSite([{ '/robots.txt': robots, '/': record, '/a': record, '/private/b': record }]);
    tmp = await tempDir();
  });
  after(async () => {
    await site.close();
    await tmp.cleanup();
  });

  test('--header (repeatable) and --cookie-file: sent where they apply', async () => {
    received.length = 0;
    const host = site.hosts[0]!;
    const cookies = join(tmp.path, 'cookies.txt');
    await writeFile(
      cookies,
      [
        '# Netscape HTTP Cookie File',
        `${host.address}\tFALSE\t/\tFALSE\t0\tsession\tabc`,
        `#HttpOnly_${host.address}\tFALSE\t/private\tFALSE\t4102444800\tdeep\txyz`,
        `${host.address}\tFALSE\t/\tTRUE\t0\tsecureonly\tno`,
        `${host.address}\tFALSE\t/\tFALSE\t1\texpired\tno`,
        '',
      ].join('\n'),
    );
    const r = await runCli([
      'crawl',
      site.url(0, '/'),
      '--data',
      join(tmp.path, 'd1'),
      ...FAST,
      '--header',
      'X-Team: crawl',
      '--header',
      'Accept-Language: de',
      '--cookie-file',
      cookies,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const byPath = new Map(received.map((x) => [x.path, x.headers]));
    assert.equal(byPath.get('/')?.['x-team'], 'crawl');
    assert.equal(byPath.get('/')?.['accept-language'], 'de');
    assert.equal(byPath.get('/')?.cookie, 'session=abc');
    assert.equal(byPath.get('/private/b')?.cookie, 'session=abc; deep=xyz');
  });

  test('--header and --cookie-file are built-in middleware steps: a beforeFetch hook sees them and may override them', async () => {
    received.length = 0;
    const host = site.hosts[0]!;
    const cookies = join(tmp.path, 'cookies-hook.txt');
    await writeFile(cookies, `# Netscape HTTP Cookie File\n${host.address}\tFALSE\t/\tFALSE\t0\tsession\tabc\n`);
    const hook = join(tmp.path, 'override.mjs');
    await writeFile(
      hook,
      `export function beforeFetch(request) {
  request.headers['x-seen'] = JSON.stringify({ team: request.headers['x-team'] ?? null, cookie: request.headers.cookie ?? null });
  if (request.url.endsWith('/a')) {
    request.headers['x-team'] = 'hook';
    request.headers.cookie = 'session=hook';
  }
  if (request.url.endsWith('/private/b')) delete request.headers.cookie;
}
`,
    );
    const r = await runCli([
      'crawl',
      site.url(0, '/'),
      '--data',
      join(tmp.path, 'd6'),
      ...FAST,
      '--header',
      'X-Team: crawl',
      '--cookie-file',
      cookies,
      '--hook',
      hook,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const byPath = new Map(received.map((x) => [x.path, x.headers]));
    for (const path of ['/', '/a', '/private/b']) {
      assert.deepEqual(
        JSON.parse(String(byPath.get(path)?.['x-seen'])),
        { team: 'crawl', cookie: 'session=abc' },
        `what the hook saw on ${path}`,
      );
    }
    assert.equal(byPath.get('/')?.['x-team'], 'crawl');
    assert.equal(byPath.get('/')?.cookie, 'session=abc');
    assert.equal(byPath.get('/a')?.['x-team'], 'hook', 'the hook overrides --header');
    assert.equal(byPath.get('/a')?.cookie, 'session=hook', 'the hook overrides --cookie-file');
    assert.equal(byPath.get('/private/b')?.cookie, undefined, 'the hook removes the cookie');
    // robots.txt is a request like the others (src/request/pipeline.ts): the same steps, the hook's too.
    assert.equal(byPath.get('/robots.txt')?.['x-team'], 'crawl');
    assert.equal(byPath.get('/robots.txt')?.cookie, 'session=abc');
    assert.deepEqual(
      JSON.parse(String(byPath.get('/robots.txt')?.['x-seen'])),
      { team: 'crawl', cookie: 'session=abc' },
      'what the hook saw on /robots.txt',
    );
  });

  test('a bad --header or --cookie-file: one line, exit 2', async () => {
    const bad = join(tmp.path, 'bad-cookies.txt');
    await writeFile(bad, 'not a cookie line\n');
    for (const args of [
      ['--header', 'no colon'],
      ['--header', 'User-Agent: x'],
      ['--cookie-file', bad],
      ['--proxy', 'socks5://127.0.0.1:1'],
    ]) {
      const r = await runCli(['crawl', site.url(0, '/'), '--data', join(tmp.path, 'd2'), ...FAST, ...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr.trim(), /^mountcrawl: BAD_OPTION: /);
    }
  });

  test('--proxy: every request goes through the proxy', async () => {
    const proxy = await startProxy();
    try {
      received.length = 0;
      const r = await runCli(['crawl', site.url(0, '/'), '--data', join(tmp.path, 'd3'), ...FAST, '--proxy', proxy.url]);
      assert.equal(r.code, 0, r.stderr);
      const origin = `${site.hosts[0]!.address}:${site.hosts[0]!.port}`;
      assert.ok(proxy.seen.length > 0 && proxy.seen.every((s) => s === origin || s.startsWith(`http://${origin}/`)), proxy.seen.join(' '));
      assert.ok(received.length >= 3, 'the pages arrived through it');
    } finally {
      proxy.server.closeAllConnections();
      proxy.server.close();
    }
  });

  test("--proxy with an https target: a CONNECT tunnel, and the site's certificate still verified", async (t) => {
    const address = '127.0.0.46';
    const tls = selfSignedCertificate(address);
    if (tls === undefined) {
      // In CI (.ci/run installs openssl) this is a failure, not a skip.
      assert.ok(process.env.CI !== 'true', 'openssl is needed to make a self-signed certificate');
      t.skip('openssl is not available to make a self-signed certificate');
      return;
    }
    const host = await startHttpsHost(address, tls, { '/': ['/tls-a.html'], '/tls-a.html': [] });
    const proxy = await startProxy();
    try {
      // Untrusted (no CA given): the tunnel is made, the certificate refused, no request goes through it.
      const strict = await runCli([
        'crawl',
        `${host.origin}/`,
        '--data',
        join(tmp.path, 'd7'),
        ...FAST,
        '--proxy',
        proxy.url,
        '--max-attempts',
        '1',
      ]);
      assert.equal(strict.code, 5, strict.stderr);
      assert.equal(host.counts.size, 0, 'a request went through over a certificate that failed');
      assert.ok(proxy.seen.includes(`${address}:${new URL(host.origin).port}`), proxy.seen.join(' '));
      // Trusted through NODE_EXTRA_CA_CERTS (verification stays on): fetched through the tunnel.
      proxy.seen.length = 0;
      const ca = join(tmp.path, 'site-ca.pem');
      await writeFile(ca, tls.cert);
      const r = await runCli(['crawl', `${host.origin}/`, '--data', join(tmp.path, 'd8'), ...FAST, '--proxy', proxy.url], {
        env: { NODE_EXTRA_CA_CERTS: ca },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(host.counts.get('/'), 1);
      assert.equal(host.counts.get('/tls-a.html'), 1);
      assert.ok(proxy.seen.length > 0, 'the proxy saw nothing');
      assert.ok(
        proxy.seen.every((x) => x === `${address}:${new URL(host.origin).port}`),
        `only CONNECT tunnels to the site: ${proxy.seen.join(' ')}`,
      );
    } finally {
      proxy.server.closeAllConnections();
      proxy.server.close();
      await host.close();
    }
  });

  test('HTTP_PROXY is honoured, and NO_PROXY exempts a host', async () => {
    const proxy = await startProxy();
    try {
      const via = await runCli(['crawl', site.url(0, '/'), '--data', join(tmp.path, 'd4'), ...FAST], { env: { HTTP_PROXY: proxy.url } });
      assert.equal(via.code, 0, via.stderr);
      assert.ok(proxy.seen.length > 0, 'HTTP_PROXY was not used');
      proxy.seen.length = 0;
      const direct = await runCli(['crawl', site.url(0, '/'), '--data', join(tmp.path, 'd5'), ...FAST], {
        env: { HTTP_PROXY: proxy.url, NO_PROXY: site.hosts[0]!.address },
      });
      assert.equal(direct.code, 0, direct.stderr);
      assert.deepEqual(proxy.seen, []);
      assert.ok(requestedPaths(site, 0).includes('/a'));
    } finally {
      proxy.server.closeAllConnections();
      proxy.server.close();
    }
  });
});
