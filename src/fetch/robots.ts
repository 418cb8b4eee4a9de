import { createRequire } from 'node:module';
import type { Clock } from '../config/clock.js';
import type { FailureKind } from '../errors.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import type { Layout } from '../store/layout.js';

/** The part of robots-parser's Robot that is used here. */
interface Robot {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
  getSitemaps(): string[];
}

// robots-parser is CommonJS whose typings do not describe its default export under NodeNext.
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, text: string) => Robot;

/** What a host's robots.txt allows. */
export interface RobotsRules {
  isAllowed(url: string): boolean;
  /** Crawl-delay for our user agent, seconds, if the file gives one. */
  readonly crawlDelaySeconds: number | undefined;
  /** Where the rules came from: `file` (2xx), `none` (4xx: everything allowed), `ignored`. */
  readonly source: 'file' | 'none' | 'ignored';
  /** The file's `Sitemap:` lines (docs/sitemaps.md). */
  readonly sitemaps?: readonly string[];
}

/** The rules when robots.txt is ignored or absent. */
export const ALLOW_ALL: RobotsRules = Object.freeze({
  isAllowed: () => true,
  crawlDelaySeconds: undefined,
  source: 'none' as const,
});

/** RFC 9309 §2.5: crawlers must parse at least 500 KiB; more is ignored. */
export const MAX_ROBOTS_BYTES = 500 * 1024;

const HEADER = /^# mountcrawl robots fetchedAt=(\S+) status=(\d+) url=(\S+)\n/;

/** Rules from robots.txt text, for URLs of any scheme of the host. */
export function parseRobots(text: string, robotsUrl: string, userAgent: string, source: 'file' | 'none'): RobotsRules {
  const parsers = new Map<string, Robot>();
  const parserFor = (origin: string): Robot => {
    let p = parsers.get(origin);
    if (p === undefined) {
      p = robotsParser(`${origin}/robots.txt`, text);
      parsers.set(origin, p);
    }
    return p;
  };
  const own = parserFor(new URL(robotsUrl).origin);
  return {
    // robots-parser answers undefined for another origin; the rules of a host apply to both
    // of its schemes here (one host directory holds both).
    isAllowed: (url) => parserFor(new URL(url).origin).isAllowed(url, userAgent) !== false,
    crawlDelaySeconds: own.getCrawlDelay(userAgent),
    source,
    sitemaps: own.getSitemaps(),
  };
}

/**
 * robots.txt could not be had now (5xx, timeout): the host waits and tries again. `code` is
 * the failure's stable code (`HTTP_503`, `DNS_NO_SUCH_HOST`, `TLS_ERROR`, ...) and `kind` whether
 * trying again can help, so that the host's URLs can be recorded with the real reason.
 */
export class RobotsUnavailable extends Error {
  constructor(
    readonly reason: string,
    readonly code: string = 'ROBOTS_UNAVAILABLE',
    readonly kind: FailureKind = 'transient',
    /** What a 429 or 503 asked for in Retry-After, milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(`robots.txt unavailable: ${reason}`);
  }
}

/**
 * A host's robots.txt as kept on the mount (robots/<host>.txt: a first comment line with
 * fetch time, status and URL, then the body as received), so other nodes and later runs reuse
 * it until it is older than `maxAgeMs`. Reads, stores and parses the file; fetching it is a
 * request like any other (src/request/robots-request.ts).
 */
export class RobotsCache {
  constructor(
    private readonly layout: Layout,
    private readonly options: { userAgent: string; maxAgeMs: number; nodeId: string; fsync: boolean },
    private readonly clock: Clock,
  ) {}

  /** The rules of `hostDir` as stored, when they are younger than `maxAgeMs`. */
  async cached(hostDir: string): Promise<RobotsRules | undefined> {
    let text: string;
    try {
      text = (await this.layout.fs.readFile(this.layout.robots(hostDir))).toString('utf8');
    } catch {
      return undefined;
    }
    const m = HEADER.exec(text);
    if (m === null) return undefined;
    const fetchedAt = Date.parse(m[1]!);
    if (!(this.clock.now() - fetchedAt < this.options.maxAgeMs)) return undefined;
    const status = Number(m[2]);
    return parseRobots(text.slice(m[0].length), m[3]!, this.options.userAgent, status < 300 ? 'file' : 'none');
  }

  /**
   * Keeps what fetching `robotsUrl` came to (`status`: 2xx, its rules; any other, everything
   * allowed, with an empty body) and returns its rules.
   */
  async store(hostDir: string, robotsUrl: string, status: number, body: string): Promise<RobotsRules> {
    const header = `# mountcrawl robots fetchedAt=${new Date(this.clock.now()).toISOString()} status=${status} url=${robotsUrl}\n`;
    await this.layout.fs.mkdir(this.layout.dir('robots'), { recursive: true });
    await writeFileAtomic(this.layout.mount, this.layout.robots(hostDir), header + body, {
      nodeId: this.options.nodeId,
      fsync: this.options.fsync,
    });
    return parseRobots(body, robotsUrl, this.options.userAgent, status >= 200 && status < 300 ? 'file' : 'none');
  }

  /** The `Sitemap:` lines of the host's stored robots.txt however old (docs/sitemaps.md); none without one. */
  async storedSitemaps(hostDir: string): Promise<readonly string[]> {
    let text: string;
    try {
      text = (await this.layout.fs.readFile(this.layout.robots(hostDir))).toString('utf8');
    } catch {
      return [];
    }
    const m = HEADER.exec(text);
    return m === null ? [] : (parseRobots(text.slice(m[0].length), m[3]!, this.options.userAgent, 'file').sitemaps ?? []);
  }
}
