import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One host of a loopback site: its own 127.0.0.x address and port. */
export interface SiteHost {
  readonly index: number;
  readonly address: string;
  readonly port: number;
  /** `http://127.0.0.x:port` */
  readonly origin: string;
  /** The host directory mountcrawl uses for it (`127.0.0.x_port`). */
  readonly hostDir: string;
}

/** Answers one request; `path` is the path and query as requested. */
export type Handler = (req: IncomingMessage, res: ServerResponse, host: SiteHost, path: string) => void | Promise<void>;

/** Hosts on one 127.0.N.x block of addresses (x from firstOctet up). */
const HOSTS_PER_BLOCK = 250;

export interface SiteOptions {
  /** How many hosts (addresses 127.0.0.<firstOctet> and up; past 250 hosts, 127.0.1.<firstOctet> and up, and so on). */
  readonly hosts: number;
  /** Last octet of the first host's address (default 2). */
  readonly firstOctet?: number;
  /** Delay before every response is started, ms. */
  readonly latencyMs?: number;
  /** Ports to listen on, by host index (a busy one falls back to any free port). */
  readonly ports?: readonly (number | undefined)[];
  /** The site: a handler per request. */
  readonly handle: Handler;
}

/**
 * A multi-host web site on loopback addresses, for tests, the demo and the benchmark. It
 * counts every request by absolute URL and records the most requests in flight per host at
 * once, so callers can check "fetched exactly once" and per-host limits from the server side.
 */
export class LoopbackSite {
  readonly hosts: SiteHost[] = [];
  /** Requests per absolute URL (`http://127.0.0.2:port/path?query`). */
  readonly counts = new Map<string, number>();
  /** Start time (ms, performance.now) of each request per absolute URL, in order. */
  readonly times = new Map<string, number[]>();
  readonly #inFlight: number[] = [];
  readonly #maxInFlight: number[] = [];
  readonly #servers: Server[] = [];
  readonly #sockets = new Set<Socket>();
  #total = 0;

  private constructor(private readonly options: SiteOptions) {}

  /** Starts the site; resolves once every host listens. */
  static async start(options: SiteOptions): Promise<LoopbackSite> {
    const site = new LoopbackSite(options);
    const first = options.firstOctet ?? 2;
    for (let i = 0; i < options.hosts; i++) {
      // 250 hosts per block of addresses: 127.0.0.x, then 127.0.1.x, ... (all of 127/8 is loopback).
      const address = `127.0.${Math.floor(i / HOSTS_PER_BLOCK)}.${first + (i % HOSTS_PER_BLOCK)}`;
      const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => void site.#serve(i, req, res));
      server.on('connection', (s) => {
        site.#sockets.add(s);
        s.on('close', () => site.#sockets.delete(s));
      });
      const listen = (port: number): Promise<void> =>
        new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, address, () => {
            server.off('error', reject);
            resolve();
          });
        });
      const wanted = options.ports?.[i];
      if (wanted === undefined) await listen(0);
      else await listen(wanted).catch(() => listen(0));
      const port = (server.address() as AddressInfo).port;
      site.hosts.push({ index: i, address, port, origin: `http://${address}:${port}`, hostDir: `${address}_${port}` });
      site.#servers.push(server);
      site.#inFlight.push(0);
      site.#maxInFlight.push(0);
    }
    return site;
  }

  /** Absolute URL of `path` on host `i`. */
  url(i: number, path: string): string {
    return `${this.hosts[i]!.origin}${path}`;
  }

  /** Requests made for an absolute URL. */
  count(url: string): number {
    return this.counts.get(url) ?? 0;
  }

  /** All requests made. */
  get total(): number {
    return this.#total;
  }

  /** Forgets every count (between runs of a benchmark against one site). */
  reset(): void {
    this.counts.clear();
    this.times.clear();
    this.#total = 0;
    this.#maxInFlight.fill(0);
  }

  /** Requests host `i` has in flight now. */
  inFlight(i: number): number {
    return this.#inFlight[i]!;
  }

  /** Most requests host `i` had in flight at once. */
  maxInFlight(i: number): number {
    return this.#maxInFlight[i]!;
  }

  async #serve(i: number, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = this.hosts[i]!;
    const path = req.url ?? '/';
    const url = `${host.origin}${path}`;
    this.#total++;
    this.counts.set(url, (this.counts.get(url) ?? 0) + 1);
    let t = this.times.get(url);
    if (t === undefined) this.times.set(url, (t = []));
    t.push(performance.now());
    this.#inFlight[i]!++;
    this.#maxInFlight[i] = Math.max(this.#maxInFlight[i]!, this.#inFlight[i]!);
    let ended = false;
    const done = (): void => {
      if (!ended) {
        ended = true;
        this.#inFlight[i]!--;
      }
    };
    res.on('close', done);
    try {
      if (this.options.latencyMs) await new Promise((r) => setTimeout(r, this.options.latencyMs));
      await this.options.handle(req, res, host, path);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    }
  }

  /** Stops every host and closes open connections. */
  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await Promise.all(this.#servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
