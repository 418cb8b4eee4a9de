import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, test, type TestContext } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import { FetchFailure } from '../../../src/errors.js';
import { Fetcher, isHtmlType, type FetcherOptions } from '../../../src/fetch/fetcher.js';
import { FakeClock } from '../../support/fake-clock.js';
import { closedPort, startLoopbackServer, type LoopbackServer } from '../../support/loopback-server.js';

const OPTIONS: FetcherOptions = {
  userAgent: 'mountcrawl-test/1.0',
  timeoutMs: 10_000,
  connectTimeoutMs: 5_000,
  maxBytes: 1_000_000,
  perHost: 1,
  insecure: false,
  denyPrivate: false,
};

/** A fetcher and a server, both closed when the test ends. */
async function setup(
  t: TestContext,
  handle: Parameters<typeof startLoopbackServer>[0],
  options: Partial<FetcherOptions> = {},
): Promise<{ server: LoopbackServer; fetcher: Fetcher }> {
  const server = await startLoopbackServer(handle);
  const fetcher = new Fetcher({ ...OPTIONS, ...options }, { clock: new FakeClock() });
  t.after(async () => {
    await fetcher.close();
    await server.close();
  });
  return { server, fetcher };
}

/** Checks a rejection is a FetchFailure with this code and kind. */
function failure(code: string, kind: 'transient' | 'final') {
  return (err: unknown): boolean => {
    assert.ok(err instanceof FetchFailure, String(err));
    assert.equal(err.code, code, err.message);
    assert.equal(err.kind, kind);
    return true;
  };
}

const PAGE = '<!doctype html><title>t</title><a href="/a">a</a>';

describe('Fetcher: successful responses', () => {
  test('a 2xx HTML page: body, status, types; the request carries our headers and no validators', async (t) => {
    const { server, fetcher } = await setup(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'Text/HTML; charset=UTF-8', etag: '"v1"' });
      res.end(PAGE);
    });
    const r = await fetcher.fetch(`${server.origin}/page`);
    assert.equal(r.url, `${server.origin}/page`);
    assert.equal(r.status, 200);
    assert.equal(r.mediaType, 'text/html');
    assert.equal(r.contentType, 'Text/HTML; charset=UTF-8');
    assert.equal(r.body?.toString(), PAGE);
    assert.equal(r.truncated, false);
    assert.equal(r.headers.etag, '"v1"');
    assert.equal(r.durationMs, 0, 'measured with the injected clock');
    const req = server.requests[0]!;
    assert.equal(req.method, 'GET');
    assert.equal(req.url, '/page');
    assert.equal(req.headers['user-agent'], 'mountcrawl-test/1.0');
    assert.match(req.headers['accept-encoding'] ?? '', /gzip/);
    assert.match(req.headers.accept ?? '', /text\/html/);
    assert.equal(req.headers['if-none-match'], undefined);
    assert.equal(req.headers['if-modified-since'], undefined);
  });

  test('a body without Content-Type is read as HTML; a gzip body is decoded', async (t) => {
    const { server, fetcher } = await setup(t, (req, res) => {
      if (req.url === '/gz') {
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        res.end(gzipSync(PAGE));
      } else {
        res.end(PAGE);
      }
    });
    const untyped = await fetcher.fetch(`${server.origin}/untyped`);
    assert.equal(untyped.mediaType, null);
    assert.equal(untyped.body?.toString(), PAGE);
    const gz = await fetcher.fetch(`${server.origin}/gz`);
    assert.equal(gz.body?.toString(), PAGE);
  });

  test('the body is cut at maxBytes of decoded bytes, with truncated set', async (t) => {
    const big = 'a'.repeat(200_000);
    const { server, fetcher } = await setup(
      t,
      (req, res) => {
        if (req.url === '/gz') {
          res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
          res.end(gzipSync(big)); // a few hundred bytes on the wire
        } else if (req.url === '/exact') {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('b'.repeat(1000));
        } else {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('c'.repeat(1001));
        }
      },
      { maxBytes: 1000 },
    );
    const gz = await fetcher.fetch(`${server.origin}/gz`);
    assert.equal(gz.body?.length, 1000);
    assert.equal(gz.truncated, true);
    assert.ok(gz.body?.every((b) => b === 0x61));
    const exact = await fetcher.fetch(`${server.origin}/exact`);
    assert.equal(exact.body?.length, 1000);
    assert.equal(exact.truncated, false);
    const over = await fetcher.fetch(`${server.origin}/over`);
    assert.equal(over.body?.length, 1000);
    assert.equal(over.truncated, true);
    const own = await fetcher.fetch(`${server.origin}/over`, { maxBytes: 10 });
    assert.equal(own.body?.toString(), 'c'.repeat(10), 'a per-request cap wins');
  });

  test('a 2xx body that is not HTML is not read (body null), unless anyType', async (t) => {
    const { server, fetcher } = await setup(t, (req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('User-agent: *\nDisallow: /x\n');
        return;
      }
      // An endless image: reading it would never end before the cap.
      res.writeHead(200, { 'content-type': 'image/png' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      const pump = (): void => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
    });
    const img = await fetcher.fetch(`${server.origin}/big.png`);
    assert.equal(img.status, 200);
    assert.equal(img.mediaType, 'image/png');
    assert.equal(img.body, null);
    assert.equal(img.truncated, false);
    const robots = await fetcher.fetch(`${server.origin}/robots.txt`, { anyType: true });
    assert.equal(robots.body?.toString(), 'User-agent: *\nDisallow: /x\n');
  });

  test('isHtmlType: HTML, XHTML and unknown are read', () => {
    assert.equal(isHtmlType('text/html'), true);
    assert.equal(isHtmlType('application/xhtml+xml'), true);
    assert.equal(isHtmlType(null), true);
    assert.equal(isHtmlType('text/plain'), false);
    assert.equal(isHtmlType('application/pdf'), false);
  });
});

describe('Fetcher: error statuses and conditional requests', () => {
  test('an error status is returned with no body, drained so that the connection is reused', async (t) => {
    const { server, fetcher } = await setup(t, (req, res) => {
      if (req.url === '/missing') {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<h1>not found</h1>'.repeat(100));
      } else {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(PAGE);
      }
    });
    const missing = await fetcher.fetch(`${server.origin}/missing`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body, null);
    const again = await fetcher.fetch(`${server.origin}/missing`);
    assert.equal(again.status, 404);
    const ok = await fetcher.fetch(`${server.origin}/ok`);
    assert.equal(ok.body?.toString(), PAGE);
    assert.equal(server.requests.length, 3);
    assert.equal(server.connections(), 1, 'one keep-alive connection for all three');
  });

  test('validators become If-None-Match and If-Modified-Since; a 304 has no body', async (t) => {
    const { server, fetcher } = await setup(t, (_req, res) => {
      res.writeHead(304, { etag: '"v1"' });
      res.end();
    });
    const r = await fetcher.fetch(`${server.origin}/page`, {
      validators: { etag: '"v1"', lastModified: 'Wed, 21 Oct 2015 07:28:00 GMT' },
    });
    assert.equal(r.status, 304);
    assert.equal(r.body, null);
    assert.equal(server.requests[0]!.headers['if-none-match'], '"v1"');
    assert.equal(server.requests[0]!.headers['if-modified-since'], 'Wed, 21 Oct 2015 07:28:00 GMT');
    await fetcher.fetch(`${server.origin}/page`, { validators: { etag: '"v2"' } });
    assert.equal(server.requests[1]!.headers['if-none-match'], '"v2"');
    assert.equal(server.requests[1]!.headers['if-modified-since'], undefined);
  });
});

describe('Fetcher: a body streamed to its reader (sitemaps)', () => {
  test('consumeBody gets the decoded body in pieces as it arrives, never joined; the response holds none', async (t) => {
    const piece = Buffer.alloc(256 * 1024, 0x61);
    const { server, fetcher } = await setup(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml', 'content-encoding': 'gzip' });
      // 16 MiB decoded, far past maxBytes: a reader with its own limits decides how much to read.
      res.end(gzipSync(Buffer.concat(Array.from({ length: 64 }, () => piece))));
    });
    let total = 0;
    let largest = 0;
    let pieces = 0;
    const r = await fetcher.fetch(`${server.origin}/big.xml`, {
      anyType: true,
      consumeBody: async (body) => {
        for await (const chunk of body) {
          pieces++;
          total += (chunk as Buffer).length;
          largest = Math.max(largest, (chunk as Buffer).length);
        }
      },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body, null);
    assert.equal(total, 64 * piece.length, 'every decoded byte reached the reader');
    assert.ok(pieces > 64 && largest <= 1024 * 1024, `${pieces} pieces, the largest ${largest} bytes`);
  });

  test('a reader that stops early ends the fetch; the next request on the host still works', async (t) => {
    const { server, fetcher } = await setup(t, (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      if (req.url === '/small') return void res.end('ok');
      res.write(Buffer.alloc(1024 * 1024, 0x62));
      res.end(Buffer.alloc(1024 * 1024, 0x62));
    });
    let seen = 0;
    const r = await fetcher.fetch(`${server.origin}/big`, {
      anyType: true,
      consumeBody: async (body) => {
        for await (const chunk of body) {
          seen += (chunk as Buffer).length;
          break;
        }
      },
    });
    assert.equal(r.body, null);
    assert.ok(seen > 0 && seen < 2 * 1024 * 1024, `read ${seen} bytes`);
    assert.equal((await fetcher.fetch(`${server.origin}/small`, { anyType: true })).body?.toString(), 'ok');
  });
});

describe('Fetcher: failures', () => {
  test('the total deadline ends a response that drips a byte every 100 ms', { timeout: 30_000 }, async (t) => {
    let closed: Promise<unknown> | undefined;
    const { server, fetcher } = await setup(
      t,
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<');
        const timer = setInterval(() => res.write('x'), 100);
        closed = once(res, 'close').finally(() => clearInterval(timer));
      },
      { timeoutMs: 600 },
    );
    // Each byte comes well within the body idle timeout: only a deadline over the whole
    // response can end this (without one the test would hang until its own timeout).
    await assert.rejects(fetcher.fetch(`${server.origin}/drip`), (err: unknown) => {
      failure('FETCH_TIMEOUT', 'transient')(err);
      assert.match((err as Error).message, /total deadline/);
      return true;
    });
    await closed; // the connection was let go
    assert.equal(server.requests.length, 1);
  });

  test('a closed port: CONNECTION_REFUSED, transient', async () => {
    const port = await closedPort();
    const fetcher = new Fetcher(OPTIONS, { clock: new FakeClock() });
    try {
      await assert.rejects(fetcher.fetch(`http://127.0.0.1:${port}/`), failure('CONNECTION_REFUSED', 'transient'));
    } finally {
      await fetcher.close();
    }
  });

  test('an outer abort while waiting for the response gives ABORTED', async (t) => {
    const controller = new AbortController();
    let closed: Promise<unknown> | undefined;
    const { server, fetcher } = await setup(t, (_req, res) => {
      closed = once(res, 'close');
      controller.abort(); // the node stops while the server has not answered yet
    });
    await assert.rejects(fetcher.fetch(`${server.origin}/slow`, { signal: controller.signal }), failure('ABORTED', 'transient'));
    await closed;
  });

  test('a signal that is already aborted gives ABORTED without a request', async (t) => {
    const { server, fetcher } = await setup(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(PAGE);
    });
    await assert.rejects(fetcher.fetch(`${server.origin}/`, { signal: AbortSignal.abort() }), failure('ABORTED', 'transient'));
    assert.equal(server.requests.length, 0);
  });

  test('--deny-private refuses loopback addresses and names that resolve to them, before connecting', async (t) => {
    const { server, fetcher } = await setup(
      t,
      (_req, res) => {
        res.end(PAGE);
      },
      { denyPrivate: true },
    );
    await assert.rejects(fetcher.fetch(`${server.origin}/`), failure('PRIVATE_ADDRESS', 'final'));
    await assert.rejects(fetcher.fetch(`http://127.9.9.9:${server.port}/`), failure('PRIVATE_ADDRESS', 'final'));
    await assert.rejects(fetcher.fetch(`http://[::1]:${server.port}/`), failure('PRIVATE_ADDRESS', 'final'));
    // A name is checked on the address it resolves to (localhost: /etc/hosts, no network).
    await assert.rejects(fetcher.fetch(`http://localhost:${server.port}/`), failure('PRIVATE_ADDRESS', 'final'));
    assert.equal(server.requests.length, 0);
    assert.equal(server.connections(), 0);
  });
});

describe('Fetcher: dispatcher', () => {
  test('an injected dispatcher is used and is not closed by close()', async (t) => {
    const server = await startLoopbackServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(PAGE);
    });
    const agent = new Agent();
    t.after(async () => {
      await agent.close();
      await server.close();
    });
    const fetcher = new Fetcher(OPTIONS, { clock: new FakeClock(), dispatcher: agent });
    assert.equal((await fetcher.fetch(`${server.origin}/`)).status, 200);
    await fetcher.close();
    assert.equal(agent.closed, false);
    assert.equal((await fetcher.fetch(`${server.origin}/`)).status, 200);
  });
});
