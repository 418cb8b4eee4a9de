import { LoopbackSite, type Handler, type SiteHost } from './site-server.js';

/** Shape of a generated site. */
export interface GeneratedSiteOptions {
  readonly hosts: number;
  readonly pagesPerHost: number;
  /** Links per page to pages of the same host. */
  readonly linksPerPage: number;
  /** Of those, how many point to another host's page (the rest stay on the host). */
  readonly crossLinks?: number;
  /** Paths (prefixes) robots.txt disallows on every host, e.g. ['/private/']; every 50th page links into each. */
  readonly disallow?: readonly string[];
}

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32); the benchmark's site uses it too. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Path of page `i` of a host. */
export function pagePath(i: number): string {
  return i === 0 ? '/' : `/p/${i}.html`;
}

/** A link of a generated page: page `page` of host `host` (an index into the site's hosts). */
export interface PageTarget {
  readonly host: number;
  readonly page: number;
}

/**
 * The pages page `i` of host `host` links to, in the order of its links, on a site of
 * `hostCount` hosts: page i+1 of the same host (a chain that guarantees coverage), then
 * `linksPerPage` pseudo-random pages, the first `crossLinks` of them on other hosts. Pure: the
 * benchmark derives the site's graph from it without fetching a page.
 */
export function pageTargets(options: GeneratedSiteOptions, host: number, i: number, hostCount: number): PageTarget[] {
  const random = rng(host * 1_000_003 + i);
  const targets: PageTarget[] = [];
  if (i + 1 < options.pagesPerHost) targets.push({ host, page: i + 1 });
  const cross = options.crossLinks ?? 0;
  for (let k = 0; k < options.linksPerPage; k++) {
    const page = Math.floor(random() * options.pagesPerHost);
    if (k < cross && hostCount > 1) targets.push({ host: (host + 1 + Math.floor(random() * (hostCount - 1))) % hostCount, page });
    else targets.push({ host, page });
  }
  return targets;
}

/**
 * A site of `hosts` hosts with `pagesPerHost` pages each, every page reachable from its
 * host's `/`: its links are `pageTargets` (a link to the same host is a path, to another host
 * an absolute URL). The same options always give the same site, so a test knows exactly which
 * URLs a complete crawl fetches: `pagePath(0 .. pagesPerHost-1)` on every host reached, plus
 * `/robots.txt`.
 */
export function generatedSite(options: GeneratedSiteOptions, hosts: () => readonly SiteHost[]): Handler {
  const disallow = options.disallow ?? [];
  return (_req, res, host, path) => {
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`User-agent: *\n${disallow.map((d) => `Disallow: ${d}\n`).join('')}`);
      return;
    }
    const m = path === '/' ? ['/', '0'] : /^\/p\/(\d+)\.html$/.exec(path);
    const i = m === null ? -1 : Number(m[1]);
    if (i < 0 || i >= options.pagesPerHost) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    const all = hosts();
    const links = pageTargets(options, host.index, i, all.length).map((t) =>
      t.host === host.index ? pagePath(t.page) : `${all[t.host]!.origin}${pagePath(t.page)}`,
    );
    // A few pages link into the disallowed paths (robots.txt must keep the crawler out).
    if (i % 50 === 0) for (const d of disallow) links.push(`${d}secret-${i}.html`);
    const body = `<!DOCTYPE html><html><head><title>page ${i} of ${host.hostDir}</title></head><body><h1>Page ${i}</h1>${links
      .map((l) => `<p><a href="${l}">link to ${l}</a></p>`)
      .join('\n')}</body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
}

/** Starts a generated site on loopback (see generatedSite). */
export async function startGeneratedSite(
  options: GeneratedSiteOptions & { latencyMs?: number; firstOctet?: number; ports?: readonly (number | undefined)[] },
): Promise<LoopbackSite> {
  let site: LoopbackSite | undefined;
  site = await LoopbackSite.start({
    hosts: options.hosts,
    ...(options.firstOctet !== undefined ? { firstOctet: options.firstOctet } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    ...(options.ports !== undefined ? { ports: options.ports } : {}),
    handle: generatedSite(options, () => site!.hosts),
  });
  return site;
}
