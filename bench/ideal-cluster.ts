import { pageTargets, type GeneratedSiteOptions, type PageTarget } from '../src/site/generated-site.js';

/**
 * What an ideal cluster could do on the bench's generated site (docs/benchmarks.md, "The
 * ideal cluster"): `slots` request slots shared by every host with no coordination cost, each
 * request taking `serviceMs`, each host limited as the nodes' politeness limits it (at most
 * `perHost` in flight, starts at least `delayMs` apart), its robots.txt first, and a page
 * fetchable only once a page linking to it has been fetched (the seeds are every host's `/`).
 */
export interface IdealModel {
  readonly slots: number;
  readonly perHost: number;
  readonly delayMs: number;
  readonly serviceMs: number;
}

/** The bounds, in seconds. */
export interface IdealCluster {
  /** Every request over every slot: total requests x serviceMs / slots. */
  readonly workSeconds: number;
  /** The longest discovery chain: (deepest page's depth + 2) x serviceMs (its host's robots.txt, then the chain). */
  readonly pathSeconds: number;
  /** The slowest host alone, its robots.txt first and each page no earlier than its discovery (includes the path). */
  readonly hostSeconds: number;
  /** No schedule can finish sooner: the largest of the three. */
  readonly lowerBoundSeconds: number;
  /** A schedule that reaches close to it: the ideal cluster's greedy scheduler, simulated (see `greedy`). */
  readonly greedySeconds: number;
  /** Requests in all (robots.txt included) and the deepest page's depth from the seeds. */
  readonly requests: number;
  readonly maxDepth: number;
}

/** The generated site's links, page by page: `links[host][page]`. */
export function siteGraph(options: GeneratedSiteOptions): PageTarget[][][] {
  return Array.from({ length: options.hosts }, (_, h) =>
    Array.from({ length: options.pagesPerHost }, (_, p) => pageTargets(options, h, p, options.hosts)),
  );
}

/** Depth of every page from the seeds (every host's page 0), breadth first; -1: not reachable. */
export function depths(links: PageTarget[][][]): number[][] {
  const depth = links.map((pages) => pages.map(() => -1));
  let level: PageTarget[] = links.map((_, host) => ({ host, page: 0 }));
  for (const s of level) depth[s.host]![0] = 0;
  for (let d = 1; level.length > 0; d++) {
    const next: PageTarget[] = [];
    for (const { host, page } of level) {
      for (const t of links[host]![page]!) {
        if (depth[t.host]![t.page] !== -1) continue;
        depth[t.host]![t.page] = d;
        next.push(t);
      }
    }
    level = next;
  }
  return depth;
}

/**
 * One host alone with unlimited slots: robots.txt at 0, then its pages in the order they can
 * first be known (a page at depth d: when its linker ends, (d + 1) x serviceMs), each start at
 * most `perHost` in flight and `delayMs` after the one before. With equal request times, taking
 * them in that order is optimal, so its end is a lower bound for the host.
 */
function hostAloneMs(pageDepths: readonly number[], m: IdealModel): number {
  const releases = [0, ...pageDepths.filter((d) => d >= 0).map((d) => (d + 1) * m.serviceMs)].sort((a, b) => a - b);
  const ends: number[] = [];
  let lastStart = -Infinity;
  for (let i = 0; i < releases.length; i++) {
    const start = Math.max(releases[i]!, lastStart + m.delayMs, i >= m.perHost ? ends[i - m.perHost]! : 0);
    lastStart = start;
    ends.push(start + m.serviceMs);
  }
  // Starts never go back and every request takes as long: the last to start ends last.
  return ends[ends.length - 1]!;
}

/**
 * The ideal cluster's own schedule, simulated: whenever a slot is free, it goes to the host
 * with the most requests still to come (known or not yet found) among the hosts that may start
 * one now; a page is known once a page linking to it has ended. Returns its end, ms.
 */
export function greedy(links: PageTarget[][][], m: IdealModel): number {
  const reach = depths(links);
  const hosts = links.map((_, h) => ({
    left: 1 + reach[h]!.filter((d) => d >= 0).length,
    queue: [] as number[],
    robotsDone: false,
    inFlight: 0,
    lastStart: -Infinity,
  }));
  const seen = links.map((pages) => pages.map(() => false));
  for (let h = 0; h < links.length; h++) [seen[h]![0], hosts[h]!.queue] = [true, [-1, 0]];
  // Requests running: [end time, host, page (-1: robots.txt)].
  let running: [number, number, number][] = [];
  let now = 0;
  let end = 0;
  for (;;) {
    for (let free = m.slots - running.length; free > 0; free--) {
      let best = -1;
      for (let h = 0; h < hosts.length; h++) {
        const s = hosts[h]!;
        if (s.queue.length === 0 || s.inFlight >= m.perHost || s.lastStart + m.delayMs > now) continue;
        if (s.queue[0] !== -1 && !s.robotsDone) continue;
        if (best < 0 || s.left > hosts[best]!.left) best = h;
      }
      if (best < 0) break;
      const s = hosts[best]!;
      const page = s.queue.shift()!;
      s.inFlight++;
      s.left--;
      s.lastStart = now;
      running.push([now + m.serviceMs, best, page]);
    }
    if (running.length === 0 && hosts.every((s) => s.queue.length === 0)) return end;
    // The next moment something changes: a request ends, or a host's gap passes.
    let next = Math.min(...running.map((r) => r[0]));
    for (const s of hosts)
      if (s.queue.length > 0 && s.inFlight < m.perHost && s.lastStart + m.delayMs > now) next = Math.min(next, s.lastStart + m.delayMs);
    now = next;
    const done = running.filter((r) => r[0] <= now);
    running = running.filter((r) => r[0] > now);
    for (const [at, h, page] of done) {
      end = Math.max(end, at);
      const s = hosts[h]!;
      s.inFlight--;
      if (page < 0) s.robotsDone = true;
      else {
        for (const t of links[h]![page]!) {
          if (seen[t.host]![t.page]) continue;
          seen[t.host]![t.page] = true;
          hosts[t.host]!.queue.push(t.page);
        }
      }
    }
  }
}

/** The bounds of the generated site `options` under model `m`. */
export function idealCluster(options: GeneratedSiteOptions, m: IdealModel): IdealCluster {
  const links = siteGraph(options);
  const reach = depths(links);
  const requests = reach.reduce((a, pages) => a + 1 + pages.filter((d) => d >= 0).length, 0);
  const maxDepth = Math.max(...reach.flat());
  const workSeconds = (requests * m.serviceMs) / m.slots / 1000;
  const pathSeconds = ((maxDepth + 2) * m.serviceMs) / 1000;
  const hostSeconds = Math.max(...reach.map((d) => hostAloneMs(d, m))) / 1000;
  return {
    workSeconds,
    pathSeconds,
    hostSeconds,
    lowerBoundSeconds: Math.max(workSeconds, pathSeconds, hostSeconds),
    greedySeconds: greedy(links, m) / 1000,
    requests,
    maxDepth,
  };
}
