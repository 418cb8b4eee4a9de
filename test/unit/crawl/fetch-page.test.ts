import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FetchFailure } from '../../../src/errors.js';
import { fetchPage, type FetchPageContext } from '../../../src/crawl/fetch-page.js';
import type { Commit, Target } from '../../../src/fetch/page-outcome.js';
import { Fetcher } from '../../../src/fetch/fetcher.js';
import { urlKey } from '../../../src/url/key.js';
import { DEFAULT_NORMALIZE_OPTIONS, normalizeUrl } from '../../../src/url/normalize.js';
import { FakeClock } from '../../support/fake-clock.js';
import { closedPort, startLoopbackServer, type LoopbackServer } from '../../support/loopback-server.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const clock = new FakeClock();

let server: LoopbackServer;
let fetcher: Fetcher;
/** Paths requested and pace() calls, in order. */
let events: string[] = [];

/** Another host name for the same loopback server: a different host directory. */
const otherHost = (path: string): string => `http://localhost:${server.port}${path}`;

before(async () => {
  server = await startLoopbackServer((req, res) => {
    const path = req.url ?? '/';
    events.push(path);
    const redirect = (status: number, location?: string): void => {
      res.writeHead(status, location === undefined ? {} : { location });
      res.end();
    };
    const html = (body: string | Buffer, type = 'text/html; charset=utf-8'): void => {
      res.writeHead(200, { 'content-type': type });
      res.end(body);
    };
    const numbered = /^\/r(\d+)$/.exec(path);
    if (numbered) {
      const n = Number(numbered[1]);
      return n < 10 ? redirect(302, `/r${n + 1}`) : html('<p>end of the line</p>');
    }
    switch (path) {
      case '/a':
        return redirect(302, '/b');
      case '/b':
        return redirect(301, `${server.origin}/c`);
      case '/c':
        return html(
          `<a href="/d">d</a> <a href="${otherHost('/e')}">e</a> <a href="/d#again">d</a> <a href="/${'x'.repeat(300)}">long</a>`,
        );
      case '/away':
        return redirect(302, otherHost('/y'));
      case '/loop1':
        return redirect(302, '/loop2');
      case '/loop2':
        return redirect(307, '/loop1');
      case '/noloc':
        return redirect(302);
      case '/mailto':
        return redirect(302, 'mailto:someone@example.org');
      case '/to-404':
        return redirect(302, '/gone');
      case '/bin':
        return html(PNG);
      case '/pdf':
        return html('%PDF-1.4', 'application/pdf');
      case '/busy':
        res.writeHead(503, { 'retry-after': '120' });
        return res.end('busy');
      case '/busy-date':
        res.writeHead(503, { 'retry-after': new Date(clock.now() + 90_000).toUTCString() });
        return res.end('busy');
      default:
        res.writeHead(404, { 'content-type': 'text/html' });
        return res.end('not here');
    }
  });
  fetcher = new Fetcher(
    {
      userAgent: 'mountcrawl-test',
      timeoutMs: 10_000,
      connectTimeoutMs: 5_000,
      maxBytes: 1_000_000,
      perHost: 2,
      insecure: false,
      denyPrivate: false,
    },
    { clock },
  );
});
after(async () => {
  await fetcher.close();
  await server.close();
});

function target(url: string, depth = 2): Target {
  const n = normalizeUrl(url);
  if (!n.ok) throw new Error(url);
  return { url: n.url, key: urlKey(n.url), hostDir: n.hostDir, depth };
}
const local = (path: string, depth = 2): Target => target(`${server.origin}${path}`, depth);
const url = (path: string): string => local(path).url;

/** A context that claims every redirect (or as `claim` says) and logs pace() calls. */
function context(
  options: { claim?: (t: Target) => boolean; maxRedirects?: number; mayGo?: () => boolean } = {},
): FetchPageContext & { claims: Target[] } {
  events = [];
  const claims: Target[] = [];
  return {
    fetcher,
    clock,
    normalize: { ...DEFAULT_NORMALIZE_OPTIONS, maxUrlLength: 200 },
    maxRedirects: options.maxRedirects ?? 10,
    claimRedirect: (t) => {
      claims.push(t);
      return options.claim?.(t) ?? true;
    },
    pace: async () => {
      events.push('pace');
      return options.mayGo?.() ?? true;
    },
    claims,
  };
}

type PageCommit = Extract<Commit, { type: 'page' }>;
type ErrorCommit = Extract<Commit, { type: 'error' }>;
function asPage(c: Commit | undefined): PageCommit {
  assert.equal(c?.type, 'page', JSON.stringify(c));
  return c as PageCommit;
}
function asError(c: Commit | undefined, code: string, kind: 'final' | 'transient'): FetchFailure {
  assert.equal(c?.type, 'error', JSON.stringify(c));
  const f = (c as ErrorCommit).failure;
  assert.ok(f instanceof FetchFailure);
  assert.equal(f.code, code, f.message);
  assert.equal(f.kind, kind);
  return f;
}

describe('fetchPage: redirects', () => {
  test('a same-host chain is followed, paced, and committed target first, then the sources last hop first', async () => {
    const ctx = context();
    const start = local('/a', 3);
    const out = await fetchPage(start, ctx);
    assert.deepEqual(events, ['/a', 'pace', '/b', 'pace', '/c']);
    assert.equal(out.requests, 3);
    assert.deepEqual(
      ctx.claims.map((t) => t.url),
      [url('/b'), url('/c')],
    );
    assert.deepEqual(out.claimed, [local('/b', 3), local('/c', 3)], 'claimed targets keep the start depth');
    assert.equal(out.commits.length, 3);

    const [c, b, a] = out.commits.map(asPage);
    assert.equal(c.target.url, url('/c'));
    assert.equal(c.response.status, 200);
    assert.equal(c.finalUrl, url('/c'));
    assert.deepEqual(c.redirects, []);
    assert.ok(c.body !== null && c.body.toString().includes('href="/d"'));
    assert.deepEqual(c.links, [url('/d'), otherHost('/e')], 'normalized, deduplicated, too-long dropped');
    assert.equal(out.tooLong, 1);

    assert.equal(b.target.url, url('/b'));
    assert.equal(b.response.status, 301);
    assert.equal(b.finalUrl, url('/c'));
    assert.deepEqual(b.redirects, [{ url: url('/b'), status: 301, location: url('/c') }]);
    assert.equal(b.body, null);
    assert.deepEqual(b.links, [url('/c')]);

    assert.deepEqual(a.target, start);
    assert.equal(a.response.status, 302);
    assert.equal(a.finalUrl, url('/c'));
    assert.deepEqual(a.redirects, [
      { url: url('/a'), status: 302, location: url('/b') },
      { url: url('/b'), status: 301, location: url('/c') },
    ]);
    assert.deepEqual(a.links, [url('/b')]);
  });

  test('a redirect to another host is recorded as a link and not followed', async () => {
    const ctx = context();
    const out = await fetchPage(local('/away'), ctx);
    assert.deepEqual(events, ['/away']);
    assert.deepEqual(ctx.claims, [], 'another host is never claimed');
    assert.deepEqual(out.claimed, []);
    assert.equal(out.commits.length, 1);
    const away = asPage(out.commits[0]);
    assert.equal(away.target.url, url('/away'));
    assert.equal(away.finalUrl, otherHost('/y'));
    assert.deepEqual(away.links, [otherHost('/y')]);
    assert.deepEqual(away.redirects, [{ url: url('/away'), status: 302, location: otherHost('/y') }]);
    assert.equal(away.body, null);
  });

  test('claimRedirect false stops the chain: the refused target is only a link', async () => {
    const ctx = context({ claim: () => false });
    const out = await fetchPage(local('/a'), ctx);
    assert.deepEqual(events, ['/a']);
    assert.deepEqual(out.claimed, []);
    assert.equal(out.commits.length, 1);
    const a = asPage(out.commits[0]);
    assert.deepEqual(a.links, [url('/b')]);
    assert.equal(a.finalUrl, url('/b'));

    // Refused at the second hop: /b is committed (pointing at /c), then /a.
    const ctx2 = context({ claim: (t) => t.url === url('/b') });
    const out2 = await fetchPage(local('/a'), ctx2);
    assert.deepEqual(events, ['/a', 'pace', '/b']);
    assert.deepEqual(
      out2.claimed.map((t) => t.url),
      [url('/b')],
    );
    const [b2, a2] = out2.commits.map(asPage);
    assert.equal(b2.target.url, url('/b'));
    assert.deepEqual(b2.links, [url('/c')]);
    assert.equal(a2.target.url, url('/a'));
    assert.deepEqual(a2.links, [url('/b')]);
    assert.equal(out2.commits.length, 2);
  });

  test('a hop that pace holds back is not sent: the first commit is ABORTED (the runner writes none), claims listed', async () => {
    // After the wait the node was fenced or lost the host's lease (docs/protocol.md, "Self-fencing").
    const ctx = context({ mayGo: () => false });
    const out = await fetchPage(local('/a'), ctx);
    assert.deepEqual(events, ['/a', 'pace']);
    assert.equal(out.requests, 1);
    asError(out.commits[0], 'ABORTED', 'transient');
    assert.equal(out.commits[0]!.target.url, url('/b'));
    assert.deepEqual(
      out.claimed.map((t) => t.url),
      [url('/b')],
    );
  });

  test('a loop gives one REDIRECT_LOOP error commit for the start URL and lists the claimed targets', async () => {
    const ctx = context();
    const out = await fetchPage(local('/loop1'), ctx);
    assert.deepEqual(events, ['/loop1', 'pace', '/loop2']);
    assert.equal(out.commits.length, 1);
    const f = asError(out.commits[0], 'REDIRECT_LOOP', 'final');
    assert.equal(out.commits[0]!.target.url, url('/loop1'));
    assert.equal(f.status, 307);
    assert.deepEqual(
      out.claimed.map((t) => t.url),
      [url('/loop2')],
    );
  });

  test('more than maxRedirects: one TOO_MANY_REDIRECTS error commit for the start URL; exactly maxRedirects is fine', async () => {
    const ctx = context({ maxRedirects: 3 });
    const out = await fetchPage(local('/r0'), ctx);
    assert.deepEqual(events, ['/r0', 'pace', '/r1', 'pace', '/r2', 'pace', '/r3']);
    assert.equal(out.requests, 4);
    assert.equal(out.commits.length, 1);
    asError(out.commits[0], 'TOO_MANY_REDIRECTS', 'final');
    assert.equal(out.commits[0]!.target.url, url('/r0'));
    assert.deepEqual(
      out.claimed.map((t) => t.url),
      [url('/r1'), url('/r2'), url('/r3')],
    );

    const ok = await fetchPage(local('/r7'), context({ maxRedirects: 3 }));
    assert.deepEqual(
      ok.commits.map((c) => `${c.type} ${c.target.url}`),
      [`page ${url('/r10')}`, `page ${url('/r9')}`, `page ${url('/r8')}`, `page ${url('/r7')}`],
    );
  });

  test('a redirect without a usable Location: BAD_REDIRECT, final', async () => {
    for (const path of ['/noloc', '/mailto']) {
      const out = await fetchPage(local(path), context());
      assert.equal(out.commits.length, 1, path);
      const f = asError(out.commits[0], 'BAD_REDIRECT', 'final');
      assert.equal(f.status, 302);
      assert.equal(out.commits[0]!.target.url, url(path));
      assert.deepEqual(out.claimed, []);
    }
  });

  test('a chain that ends in an error: the error for the target, then the redirect that led there', async () => {
    const out = await fetchPage(local('/to-404'), context());
    assert.equal(out.commits.length, 2);
    asError(out.commits[0], 'HTTP_404', 'final');
    assert.equal(out.commits[0]!.target.url, url('/gone'));
    const src = asPage(out.commits[1]);
    assert.equal(src.target.url, url('/to-404'));
    assert.deepEqual(src.links, [url('/gone')]);
    assert.deepEqual(
      out.claimed.map((t) => t.url),
      [url('/gone')],
    );
  });

  test("a redirect target's referrer is the page that linked to the chain's start (docs/protocol.md)", async () => {
    const referrer = { url: url('/links-here'), depth: 2 };
    const out = await fetchPage({ ...local('/to-404'), referrer }, context());
    assert.deepEqual(out.commits[0]!.target.referrer, referrer, 'the 404 at the end of the chain');
    assert.deepEqual(out.claimed[0]!.referrer, referrer);
  });
});

describe('fetchPage: bodies and failures', () => {
  test('a binary body served as HTML: BINARY_BODY, final', async () => {
    const out = await fetchPage(local('/bin'), context());
    const f = asError(out.commits[0], 'BINARY_BODY', 'final');
    assert.equal(f.status, 200);
    assert.equal(out.commits.length, 1);
  });

  test('a body that is not HTML: a page commit with no body and no links', async () => {
    const out = await fetchPage(local('/pdf'), context());
    const p = asPage(out.commits[0]);
    assert.equal(p.body, null);
    assert.deepEqual(p.links, []);
    assert.equal(p.response.mediaType, 'application/pdf');
  });

  test('404 is final; 503 is transient with its Retry-After in milliseconds (seconds or a date)', async () => {
    const missing = asError((await fetchPage(local('/missing'), context())).commits[0], 'HTTP_404', 'final');
    assert.equal(missing.status, 404);
    assert.equal(missing.retryAfterMs, undefined);
    const busy = asError((await fetchPage(local('/busy'), context())).commits[0], 'HTTP_503', 'transient');
    assert.equal(busy.status, 503);
    assert.equal(busy.retryAfterMs, 120_000);
    const dated = asError((await fetchPage(local('/busy-date'), context())).commits[0], 'HTTP_503', 'transient');
    assert.equal(dated.retryAfterMs, 90_000, 'measured from the injected wall clock');
  });

  test('a network failure becomes an error commit', async () => {
    const port = await closedPort();
    const out = await fetchPage(target(`http://127.0.0.1:${port}/`), context());
    assert.equal(out.commits.length, 1);
    asError(out.commits[0], 'CONNECTION_REFUSED', 'transient');
    assert.equal(out.requests, 1);
  });
});
