import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackSite, type SiteHost } from '../../src/site/site-server.js';

/** What a route handler knows about the request beyond req and res. */
export interface RouteContext {
  readonly site: LoopbackSite;
  readonly host: SiteHost;
  /** Path and query as requested. */
  readonly path: string;
  /** 1 for the first request of this absolute URL, 2 for the second, ... */
  readonly n: number;
}

/** Answers one request of one path. */
export type Route = (req: IncomingMessage, res: ServerResponse, ctx: RouteContext) => void | Promise<void>;

/**
 * The routes of one host: exact paths (query included), or prefixes ending in `*`
 * (`/cal/*`). Anything else, robots.txt included, is a 404.
 */
export type HostRoutes = Readonly<Record<string, Route>>;

/**
 * A LoopbackSite whose hosts are described by route tables, one per host (host i listens on
 * 127.0.0.<firstOctet + i>). The site counts every request (site.counts, site.times,
 * site.maxInFlight) as usual.
 */
export async function startRoutedSite(hosts: readonly HostRoutes[], options: { firstOctet?: number } = {}): Promise<LoopbackSite> {
  let site: LoopbackSite | undefined;
  const overall = { now: 0, max: 0 };
  const prefixes = hosts.map((routes) =>
    Object.keys(routes)
      .filter((k) => k.endsWith('*'))
      .sort((a, b) => b.length - a.length),
  );
  site = await LoopbackSite.start({
    hosts: hosts.length,
    ...(options.firstOctet !== undefined ? { firstOctet: options.firstOctet } : {}),
    handle: async (req, res, host, path) => {
      overall.now++;
      overall.max = Math.max(overall.max, overall.now);
      res.on('close', () => overall.now--);
      const routes = hosts[host.index]!;
      const route = routes[path] ?? routes[prefixes[host.index]!.find((p) => path.startsWith(p.slice(0, -1))) ?? ''];
      if (route === undefined) return notFound(res);
      const n = site!.count(`${host.origin}${path}`);
      await route(req, res, { site: site!, host, path, n });
    },
  });
  inFlightOverall.set(site, overall);
  return site;
}

const inFlightOverall = new WeakMap<LoopbackSite, { now: number; max: number }>();

/** Most requests the site had in flight at once, all hosts together. */
export function maxInFlightOverall(site: LoopbackSite): number {
  return inFlightOverall.get(site)?.max ?? 0;
}

/** Sends `body` as a complete text/html response (UTF-8 unless the headers say otherwise). */
export function sendHtml(res: ServerResponse, body: string | Buffer, headers: Record<string, string | number> = {}): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': bytes.length, ...headers });
  res.end(bytes);
}

/** A small HTML page with one `<a>` per link. */
export function page(title: string, links: readonly string[] = []): string {
  return `<!DOCTYPE html><html><head><title>${title}</title></head><body><h1>${title}</h1>\n${links
    .map((l) => `<a href="${l}">${l.slice(0, 40)}</a>`)
    .join('\n')}</body></html>`;
}

/** A route serving a page with these links. */
export function pageRoute(links: readonly string[] = []): Route {
  return (_req, res, ctx) => sendHtml(res, page(ctx.path, links));
}

/** A route answering with a redirect. */
export function redirectRoute(location: string, status = 302): Route {
  return (_req, res) => {
    res.writeHead(status, { location, 'content-length': 0 });
    res.end();
  };
}

/** A route answering with a status and a small text body. */
export function statusRoute(status: number, headers: Record<string, string> = {}): Route {
  return (_req, res) => {
    const body = `status ${status}`;
    res.writeHead(status, { 'content-type': 'text/plain', 'content-length': body.length, ...headers });
    res.end(body);
  };
}

/** A route serving robots.txt text. */
export function robotsRoute(text: string): Route {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
}

export function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/plain', 'content-length': 9 });
  res.end('not found');
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Request start times (site.times) of every URL of host `i` whose path passes `filter`, sorted. */
export function startTimes(site: LoopbackSite, i: number, filter: (path: string) => boolean = () => true): number[] {
  const origin = site.hosts[i]!.origin;
  const out: number[] = [];
  for (const [url, times] of site.times) {
    if (url.startsWith(`${origin}/`) && filter(url.slice(origin.length))) out.push(...times);
  }
  return out.sort((a, b) => a - b);
}

/** Gaps between consecutive times, ms. */
export function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}

/** Paths requested on host `i` (each once, sorted). */
export function requestedPaths(site: LoopbackSite, i: number): string[] {
  const origin = site.hosts[i]!.origin;
  return [...site.counts.keys()]
    .filter((u) => u.startsWith(`${origin}/`))
    .map((u) => u.slice(origin.length))
    .sort();
}
