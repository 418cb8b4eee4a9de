import type { FetchedResponse, FetchOptions } from '../fetch/fetcher.js';
import { FetchFailure } from '../errors.js';
import type { Random } from './random.js';
import type { Scheduler } from './scheduler.js';
import type { Trace } from './trace.js';

/** One URL of the simulated site and how it answers. */
export interface SitePage {
  readonly url: string;
  readonly host: string;
  /** A page (200, HTML, its links), a redirect (301 to `target`), or gone (404 for good). */
  readonly kind: 'page' | 'redirect' | 'gone';
  readonly links: readonly string[];
  readonly target?: string;
  /** Until this virtual time it answers `failStatus` (503 or 429): a server in trouble for a while. */
  readonly failUntil: number;
  readonly failStatus: number;
}

/** A host's robots.txt: absent (404), or disallowing /private/; it may answer 503 for a while first. */
export interface SiteHost {
  readonly name: string;
  readonly disallow: boolean;
  readonly robotsFailUntil: number;
}

/** One request as the site saw it: the property checks read these (src/sim/properties.ts). */
export interface SiteRequest {
  readonly node: string;
  /** The node's process: a restarted node is a new one. */
  readonly process: string;
  readonly host: string;
  readonly url: string;
  readonly start: number;
  end: number | undefined;
  status: number | undefined;
}

/** What a node's fetcher is asked (src/fetch/fetcher.ts, Fetcher): one request at a time, and the end. */
export interface SimFetcher {
  fetch(url: string, options?: FetchOptions): Promise<FetchedResponse>;
  close(): Promise<void>;
}

/** Told when a request reaches the site and when its answer leaves. */
export interface SiteObserver {
  started(req: SiteRequest): void;
  ended(req: SiteRequest): void;
}

/**
 * The web as a simulated run sees it (docs/simulator.md): a few hosts with pages that link
 * across hosts, redirects, pages gone for good, servers that answer 503 or 429 for a while,
 * robots.txt that disallows a part of a host, latencies of milliseconds to seconds. It is the
 * fetcher of every node (one per process: `fetcherFor`), and it logs every request.
 */
export class SimSite {
  readonly pages = new Map<string, SitePage>();
  readonly hosts: SiteHost[] = [];
  readonly seeds: string[];
  readonly requests: SiteRequest[] = [];
  readonly #sched: Scheduler;
  readonly #rng: Random;
  readonly #trace: Trace;
  readonly #observer: SiteObserver;

  constructor(env: { sched: Scheduler; rng: Random; trace: Trace; observer: SiteObserver }) {
    this.#sched = env.sched;
    this.#rng = env.rng;
    this.#trace = env.trace;
    this.#observer = env.observer;
    this.#build();
    this.seeds = [`http://${this.hosts[0]!.name}/`];
  }

  /** The fetcher of one node's process. */
  fetcherFor(node: string, process: string): SimFetcher {
    return { fetch: (url, options) => this.#fetch(node, process, url, options ?? {}), close: async () => undefined };
  }

  /** True when robots.txt of the URL's host keeps the crawler away from it. */
  disallowed(url: string): boolean {
    const u = new URL(url);
    return u.pathname.startsWith('/private/') && this.hosts.some((h) => h.name === u.host && h.disallow);
  }

  #build(): void {
    const rng = this.#rng;
    const hostCount = rng.between(3, 6);
    for (let i = 0; i < hostCount; i++) {
      const name = `h${i}.example`;
      this.hosts.push({ name, disallow: rng.chance(0.3), robotsFailUntil: rng.chance(0.15) ? rng.between(500, 8000) : 0 });
    }
    const total = rng.between(10, 40);
    const urls: string[] = this.hosts.map((h) => `http://${h.name}/`);
    for (let i = urls.length; i < total; i++) {
      const h = rng.pick(this.hosts);
      urls.push(h.disallow && rng.chance(0.2) ? `http://${h.name}/private/p${i}` : `http://${h.name}/p${i}`);
    }
    // Each URL but the seed is linked from the one before it in a shuffled order, so all can be reached.
    const order = [urls[0]!, ...shuffle(urls.slice(1), rng)];
    const links = new Map<string, string[]>(urls.map((u) => [u, []]));
    for (let i = 1; i < order.length; i++) links.get(order[i - 1]!)!.push(order[i]!);
    for (const u of urls) for (let n = rng.int(4); n > 0; n--) links.get(u)!.push(rng.pick(urls));
    for (const url of urls) {
      const host = new URL(url).host;
      const failUntil = rng.chance(0.1) ? rng.between(200, 15_000) : 0;
      const failStatus = rng.chance(0.5) ? 503 : 429;
      const roll = rng.next();
      if (url !== order[0] && roll < 0.08) {
        // A redirect keeps its links on the page it sends to, so what can be reached stays the same.
        const target = `${url.replace(/\/$/, '')}/moved`;
        this.pages.set(url, { url, host, kind: 'redirect', links: [], target, failUntil, failStatus });
        this.pages.set(target, { url: target, host, kind: 'page', links: links.get(url)!, failUntil: 0, failStatus });
      } else if (url !== order[0] && roll < 0.12) {
        this.pages.set(url, { url, host, kind: 'gone', links: [], failUntil, failStatus });
      } else {
        this.pages.set(url, { url, host, kind: 'page', links: links.get(url)!, failUntil, failStatus });
      }
    }
  }

  #fetch(node: string, process: string, url: string, options: FetchOptions): Promise<FetchedResponse> {
    const sched = this.#sched;
    return new Promise((resolve, reject) => {
      const signal = options.signal;
      const stopped = (): void => reject(new FetchFailure('ABORTED', 'transient', 'stopped'));
      if (signal?.aborted) return stopped();
      signal?.addEventListener('abort', stopped, { once: true });
      sched.after(this.#rng.next() * 2, () => {
        const host = new URL(url).host;
        const req: SiteRequest = { node, process, host, url, start: sched.now, end: undefined, status: undefined };
        this.requests.push(req);
        this.#observer.started(req);
        const answer = this.#answer(url);
        const took = this.#rng.chance(0.05) ? this.#rng.between(500, 3000) : this.#rng.between(20, 200);
        sched.after(took, () => {
          req.end = sched.now;
          req.status = answer.status;
          this.#observer.ended(req);
          this.#trace.note(sched.now, node, `GET ${url} ${answer.status}`);
          sched.after(
            this.#rng.next() * 2,
            () => {
              signal?.removeEventListener('abort', stopped);
              resolve({ ...answer, url, truncated: false, durationMs: Math.round(took) });
            },
            process,
          );
        });
      });
    });
  }

  #answer(url: string): Omit<FetchedResponse, 'url' | 'truncated' | 'durationMs'> {
    const now = this.#sched.now;
    const u = new URL(url);
    if (u.pathname === '/robots.txt') {
      const host = this.hosts.find((h) => h.name === u.host);
      if (host === undefined || now < host.robotsFailUntil) return plain(host === undefined ? 404 : 503);
      if (!host.disallow) return plain(404);
      return {
        status: 200,
        headers: { 'content-type': 'text/plain' },
        mediaType: 'text/plain',
        contentType: 'text/plain',
        body: Buffer.from('User-agent: *\nDisallow: /private/\n'),
      };
    }
    const page = this.pages.get(url);
    if (page === undefined) return plain(404);
    if (now < page.failUntil) return plain(page.failStatus, page.failStatus === 429 ? { 'retry-after': '1' } : {});
    if (page.kind === 'gone') return plain(404);
    if (page.kind === 'redirect') return plain(301, { location: page.target! });
    const body = `<html><body>${page.links.map((l) => `<a href="${l}">x</a>`).join('')}</body></html>`;
    return {
      status: 200,
      headers: { 'content-type': 'text/html' },
      mediaType: 'text/html',
      contentType: 'text/html',
      body: Buffer.from(body),
    };
  }
}

function plain(status: number, headers: Record<string, string> = {}): Omit<FetchedResponse, 'url' | 'truncated' | 'durationMs'> {
  return { status, headers, mediaType: null, contentType: null, body: null };
}

function shuffle<T>(items: T[], rng: Random): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
