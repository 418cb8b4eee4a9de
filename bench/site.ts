import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { DISALLOWED_PREFIXES, ROBOTS_TXT, generatePage, pagePath, type PageHost, type PageShape } from './pages.js';

/** Shape of the benchmark site. */
export interface BenchSiteOptions {
  /**
   * Hosts in the site, on 127.0.0.<firstOctet> up to 127.0.0.199, then 127.0.1.<firstOctet>
   * up, and so on (at most 5000).
   */
  readonly hosts: number;
  readonly pagesPerHost: number;
  /** Last octet of the first host's address (default 10). */
  readonly firstOctet?: number;
  /** Delay before every response, ms (changeable between runs with `latencyMs`). */
  readonly latencyMs?: number;
  /** Page shapes (bench/pages.ts); default `standard`. */
  readonly pages?: PageShape | 'mixed';
}

/** One host of the site. */
export interface BenchHost extends PageHost {
  readonly address: string;
  readonly port: number;
  /** mountcrawl's host directory name (`127.0.0.10_34567`). */
  readonly hostDir: string;
}

/** What the site saw during one run (between `reset()` and `counts()`). */
export interface SiteCounts {
  /** Pages in the site. */
  readonly pages: number;
  /** Distinct pages requested at least once. */
  readonly pagesFetched: number;
  /** Every request to a host of the site. */
  readonly requests: number;
  readonly pageRequests: number;
  readonly robotsRequests: number;
  /** Requests under a path robots.txt disallows. */
  readonly disallowedRequests: number;
  /** Requests to URLs that are neither pages, robots.txt nor disallowed (404s: assets, bad resolution). */
  readonly otherRequests: number;
  /** Requests beyond the first for the same URL (pages, robots.txt and the rest), summed. */
  readonly duplicateRequests: number;
  /** Requests (or TLS attempts: connections) that reached the hosts outside the site. */
  readonly externalRequests: number;
  readonly externalConnections: number;
  /** Most requests in flight at once on one host (from request to response sent). */
  readonly maxInFlightPerHost: number;
  /** Seconds from the first request to the last response. */
  readonly activeSeconds: number;
  /** performance.now() of the first request and of the last response (undefined: none). */
  readonly firstRequestAt: number | undefined;
  readonly lastResponseAt: number | undefined;
  /** Up to 10 URLs requested more than once, with their counts (to see what a crawler fetched twice). */
  readonly duplicateExamples: readonly string[];
}

/** The hosts outside the site that pages link to: they count whatever reaches them. */
const EXTERNAL_OCTETS = [200, 201, 202];

interface HostCounters {
  pages: Uint32Array;
  robots: number;
  disallowed: Map<string, number>;
  other: Map<string, number>;
  inFlight: number;
  maxInFlight: number;
}

/**
 * The benchmark's multi-host site on loopback (docs/architecture.md, "Tests"): every page generated once before
 * any crawler runs and served from memory, so that the site's own CPU (which shares the
 * machine with the crawler) stays small. Counts every request per URL and the most requests
 * in flight per host, and runs three "external" hosts outside the site that pages link to
 * and that no crawler may reach.
 */
export class BenchSite {
  readonly hosts: BenchHost[] = [];
  /** Origins of the hosts outside the site. */
  readonly externals: string[] = [];
  readonly pagesPerHost: number;
  readonly pageShape: PageShape | 'mixed';
  /** Delay before each response, ms. */
  latencyMs: number;
  /** Average body size and `<a>` count of the generated pages. */
  stats = { avgBytes: 0, avgAnchors: 0, avgElements: 0, generateSeconds: 0 };
  readonly #bodies: Buffer[][] = [];
  readonly #pathIndex = new Map<string, number>();
  readonly #servers: Server[] = [];
  readonly #sockets = new Set<Socket>();
  #counters: HostCounters[] = [];
  #external = { requests: 0, connections: 0 };
  #requests = 0;
  #firstAt: number | undefined;
  #lastAt = 0;

  private constructor(options: BenchSiteOptions) {
    this.pagesPerHost = options.pagesPerHost;
    this.pageShape = options.pages ?? 'standard';
    this.latencyMs = options.latencyMs ?? 0;
  }

  /** Starts every host, then generates every page (links need the hosts' ports). */
  static async start(options: BenchSiteOptions): Promise<BenchSite> {
    const first = options.firstOctet ?? 10;
    // Each block of 127.0.N.x holds the octets from `first` to below the external hosts'.
    const perBlock = EXTERNAL_OCTETS[0]! - first;
    if (options.hosts < 1 || perBlock < 1 || options.hosts > perBlock * 20) {
      throw new RangeError(`--hosts must be 1..${Math.max(0, perBlock * 20)}`);
    }
    if (options.pagesPerHost < 1) throw new RangeError('--pages must be at least 1');
    const site = new BenchSite(options);
    try {
      for (let i = 0; i < options.hosts; i++) {
        const address = `127.0.${Math.floor(i / perBlock)}.${first + (i % perBlock)}`;
        const port = await site.#listen(address, (req, res) => site.#serve(i, req, res));
        const authority = `${address}:${port}`;
        site.hosts.push({ index: i, address, port, authority, origin: `http://${authority}`, hostDir: `${address}_${port}` });
      }
      for (const octet of EXTERNAL_OCTETS) {
        const address = `127.0.0.${octet}`;
        const port = await site.#listen(
          address,
          (_req, res) => {
            site.#external.requests++;
            res.writeHead(404).end();
          },
          true,
        );
        site.externals.push(`http://${address}:${port}`);
      }
    } catch (err) {
      await site.close();
      throw err;
    }
    site.#generate();
    site.reset();
    return site;
  }

  async #listen(address: string, handler: (req: IncomingMessage, res: ServerResponse) => void, external = false): Promise<number> {
    const server = createServer({ keepAliveTimeout: 30_000, noDelay: true }, handler);
    server.on('connection', (s: Socket) => {
      if (external) this.#external.connections++;
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, address, () => resolve());
    });
    this.#servers.push(server);
    return (server.address() as AddressInfo).port;
  }

  #generate(): void {
    const started = performance.now();
    const shape = { hosts: this.hosts, pagesPerHost: this.pagesPerHost, external: this.externals, pages: this.pageShape };
    let bytes = 0;
    let anchors = 0;
    let elements = 0;
    for (let p = 0; p < this.pagesPerHost; p++) this.#pathIndex.set(pagePath(p), p);
    for (let h = 0; h < this.hosts.length; h++) {
      const bodies: Buffer[] = [];
      for (let p = 0; p < this.pagesPerHost; p++) {
        const page = generatePage(shape, h, p);
        bodies.push(page.body);
        bytes += page.body.length;
        anchors += page.anchors;
        // Start tags: `<` followed by a letter.
        for (let k = 0; k < page.body.length - 1; k++) {
          if (page.body[k] === 0x3c && ((page.body[k + 1]! | 0x20) - 0x61) >>> 0 < 26) elements++;
        }
      }
      this.#bodies.push(bodies);
    }
    const n = this.hosts.length * this.pagesPerHost;
    this.stats = {
      avgBytes: Math.round(bytes / n),
      avgAnchors: Math.round((anchors / n) * 10) / 10,
      avgElements: Math.round(elements / n),
      generateSeconds: Math.round((performance.now() - started) / 100) / 10,
    };
  }

  /** The pages of the site, host by host interleaved (page 0 of every host, then page 1, ...). */
  pageUrls(): string[] {
    const out: string[] = [];
    for (let p = 0; p < this.pagesPerHost; p++) for (const h of this.hosts) out.push(`${h.origin}${pagePath(p)}`);
    return out;
  }

  /** The home page of every host: what every crawler starts from. */
  seeds(): string[] {
    return this.hosts.map((h) => `${h.origin}/`);
  }

  /** Forgets what was counted: call before each crawler's run. */
  reset(): void {
    this.#counters = this.hosts.map(() => ({
      pages: new Uint32Array(this.pagesPerHost),
      robots: 0,
      disallowed: new Map(),
      other: new Map(),
      inFlight: 0,
      maxInFlight: 0,
    }));
    this.#external = { requests: 0, connections: 0 };
    this.#requests = 0;
    this.#firstAt = undefined;
    this.#lastAt = 0;
  }

  /** What was counted since the last reset. */
  counts(): SiteCounts {
    let pagesFetched = 0;
    let pageRequests = 0;
    let robotsRequests = 0;
    let disallowedRequests = 0;
    let otherRequests = 0;
    let duplicateRequests = 0;
    let maxInFlightPerHost = 0;
    const duplicateExamples: string[] = [];
    const duplicate = (h: number, path: string, n: number): void => {
      duplicateRequests += n - 1;
      if (duplicateExamples.length < 10) duplicateExamples.push(`${n}x ${this.hosts[h]!.origin}${path}`);
    };
    this.#counters.forEach((c, h) => {
      c.pages.forEach((n, p) => {
        if (n > 0) pagesFetched++;
        pageRequests += n;
        if (n > 1) duplicate(h, pagePath(p), n);
      });
      robotsRequests += c.robots;
      if (c.robots > 1) duplicate(h, '/robots.txt', c.robots);
      for (const [map, add] of [
        [c.disallowed, (n: number) => (disallowedRequests += n)],
        [c.other, (n: number) => (otherRequests += n)],
      ] as const) {
        for (const [path, n] of map) {
          add(n);
          if (n > 1) duplicate(h, path, n);
        }
      }
      maxInFlightPerHost = Math.max(maxInFlightPerHost, c.maxInFlight);
    });
    return {
      pages: this.hosts.length * this.pagesPerHost,
      pagesFetched,
      requests: this.#requests,
      pageRequests,
      robotsRequests,
      disallowedRequests,
      otherRequests,
      duplicateRequests,
      externalRequests: this.#external.requests,
      externalConnections: this.#external.connections,
      maxInFlightPerHost,
      activeSeconds: this.#firstAt === undefined ? 0 : Math.max(0, this.#lastAt - this.#firstAt) / 1000,
      duplicateExamples,
      firstRequestAt: this.#firstAt,
      lastResponseAt: this.#firstAt === undefined ? undefined : this.#lastAt,
    };
  }

  #serve(h: number, req: IncomingMessage, res: ServerResponse): void {
    const c = this.#counters[h]!;
    const now = performance.now();
    this.#requests++;
    this.#firstAt ??= now;
    c.inFlight++;
    if (c.inFlight > c.maxInFlight) c.maxInFlight = c.inFlight;
    let ended = false;
    const done = (): void => {
      if (ended) return;
      ended = true;
      c.inFlight--;
      this.#lastAt = performance.now();
    };
    res.once('finish', done);
    res.once('close', done);

    const path = req.url ?? '/';
    const page = this.#pathIndex.get(path);
    let status = 404;
    let type = 'text/plain';
    let body: Buffer | string = 'not found';
    if (page !== undefined) {
      c.pages[page]!++;
      status = 200;
      type = 'text/html; charset=utf-8';
      body = this.#bodies[h]![page]!;
    } else if (path === '/robots.txt') {
      c.robots++;
      status = 200;
      body = ROBOTS_TXT;
    } else if (DISALLOWED_PREFIXES.some((p) => path.startsWith(p))) {
      c.disallowed.set(path, (c.disallowed.get(path) ?? 0) + 1);
      status = 200;
      type = 'text/html; charset=utf-8';
      body = '<!DOCTYPE html><html><body><p>Not for robots.</p></body></html>';
    } else {
      c.other.set(path, (c.other.get(path) ?? 0) + 1);
    }
    const send = (): void => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (this.latencyMs > 0) setTimeout(send, this.latencyMs);
    else send();
  }

  /** Stops every host and closes open connections. */
  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await Promise.all(this.#servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
