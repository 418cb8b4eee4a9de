import type { RecrawlPolicy } from '../recrawl/recrawl-policy.js';
import { DEFAULT_NORMALIZE_OPTIONS, type NormalizeOptions } from '../url/normalize.js';

/** Which hosts a crawl follows links to. */
export type Scope = 'host' | 'domain' | 'any';

/** What rendezvous hashing shares out between nodes (docs/protocol.md, "Who crawls what"). */
export type Partition = 'host' | 'url';

/**
 * The whole configuration of one crawling node: built once from the command line
 * (src/cli/crawl-options.ts), validated there, frozen, and passed down. Nothing below the CLI
 * reads process.env or process.argv. docs/options.md documents every field's flag and default.
 */
export interface CrawlConfig {
  /** The data directory (docs/protocol.md, "What is on the mount"). */
  readonly dataDir: string;
  /** Normalized seed URLs given on this command line (they are also written to seeds/). */
  readonly seedUrls: readonly string[];
  readonly scope: Scope;
  readonly include: readonly RegExp[];
  readonly exclude: readonly RegExp[];
  /** Seeds are depth 0; pages deeper than this are not fetched. */
  readonly maxDepth: number;
  /** Pages this node fetches in this run before it stops (Infinity: no limit). */
  readonly maxPages: number;
  /** Pages fetched per host in this run before the host is left alone. */
  readonly maxPagesPerHost: number;
  /** Requests in flight in this node. */
  readonly concurrency: number;
  /** Requests in flight per host (for the whole cluster in host partitioning). */
  readonly perHost: number;
  /** Least gap between request starts on one host, milliseconds. */
  readonly delayMs: number;
  /** Total deadline of one request, headers and body, milliseconds. */
  readonly timeoutMs: number;
  /** Deadline for the TCP (and TLS) connection, milliseconds. */
  readonly connectTimeoutMs: number;
  /** Most decoded bytes kept of one body; the rest is cut off. */
  readonly maxBytes: number;
  readonly userAgent: string;
  /** Longest wait for one --hook call (docs/hooks.md), milliseconds. */
  readonly hookTimeoutMs: number;
  readonly nodeId: string;
  /** Progress display (a bar on a terminal, lines otherwise). */
  readonly progress: boolean;
  /** Log lines as JSON objects. */
  readonly json: boolean;
  /** Also the details a plain log leaves out (Logger.debug): a reseed's counters, membership changes. */
  readonly verbose: boolean;
  readonly normalize: NormalizeOptions;
  /** True when --session-params was given (it must then match the data directory's). */
  readonly sessionParamsExplicit: boolean;
  /** Most URLs queued (in memory or spilled); more are left on the mount for the next reseed. */
  readonly frontierCap: number;
  /** URLs of the host queues held in memory before a queue's tail spills to a local file (docs/protocol.md, "Memory"). */
  readonly frontierMemory: number;
  /** Where this node's spill files go (its own directory in it); the OS's temporary directory by default. */
  readonly spillDir?: string;
  readonly maxRedirects: number;
  /** Attempts of a URL that fails transiently before the failure becomes final. */
  readonly maxAttempts: number;
  /** Wait after the first transient failure; doubles after each further one. */
  readonly retryBaseMs: number;
  /** Longest wait between attempts. */
  readonly retryMaxMs: number;
  /** Obey robots.txt. */
  readonly robots: boolean;
  /** Longest Crawl-delay honoured, milliseconds. */
  readonly crawlDelayCapMs: number;
  /** Age after which robots.txt is fetched again. */
  readonly robotsMaxAgeMs: number;
  /** Accept invalid TLS certificates. */
  readonly insecure: boolean;
  /** Refuse to connect to private, loopback and link-local addresses. */
  readonly denyPrivate: boolean;
  /** fsync each file before it is renamed into place (durability across power loss). */
  readonly fsync: boolean;
  /** Keep polling for new seeds and links instead of exiting when the crawl is done. */
  readonly watch: boolean;
  readonly partition: Partition;
  /**
   * Hand-offs (docs/protocol.md): links of another node's hosts are sent to it in files
   * rather than found by its reading every links record. Default true; `--partition url`
   * never uses them.
   */
  readonly handoff?: boolean;
  /**
   * Lending hosts (docs/protocol.md, "Lending hosts"): a node with more hosts waiting for a
   * request slot than the cluster's even balance lends some to a peer below it. Default true;
   * needs hand-offs.
   */
  readonly lend?: boolean;
  /** How often this node rewrites its heartbeat. */
  readonly heartbeatMs: number;
  /**
   * Peers known to start together with this node (the other children of --processes): once
   * it sees that many, a starting node need not wait a whole heartbeat for them.
   */
  readonly startPeers?: number;
  /**
   * The control file's `seq` as the node's supervisor read it when it started (src/cli/supervisor.ts):
   * a stop given after that stops a node it restarts too. Default: what the node reads at its start.
   */
  readonly controlSince?: number;
  /** A node whose heartbeat counter has not changed for this long is dead. */
  readonly deadAfterMs: number;
  /** How long a node waits for a failing mount to come back before it exits. */
  readonly mountRetryMs: number;
  /** Most times one path segment may repeat in a URL before it counts as a trap. */
  readonly maxRepeatedSegments: number;
  /**
   * Most pages queued per host in a run under one URL "shape" (the path with every digit run
   * replaced by 0): an extra bound on generated sequences such as calendars, which
   * --max-depth already bounds. Infinity (the default): no bound.
   */
  readonly maxPagesPerPattern: number;
  /** Media types of non-HTML responses stored in files/ (--keep). */
  readonly keepTypes?: readonly string[];
  /** Extra request headers (--header), lower-case names. */
  readonly headers?: readonly (readonly [string, string])[];
  /** Cookies from --cookie-file (Netscape cookies.txt). */
  readonly cookies?: readonly import('../fetch/cookie-file.js').FileCookie[];
  /** --proxy, or HTTP_PROXY / HTTPS_PROXY / NO_PROXY (read by the CLI). */
  readonly proxy?: { readonly http?: string; readonly https?: string; readonly noProxy?: string };
  /** Leave out links marked rel="nofollow" (default: follow them). */
  readonly obeyRelNofollow?: boolean;
  /** Write WARC files of every fetch under warc/ (docs/warc.md). */
  readonly warc: boolean;
  /** A WARC file is closed and a new one started before it would pass this size, bytes. */
  readonly warcMaxSize: number;
  /** Revisit pages (--recrawl-after, docs/recrawl.md); undefined: a page is fetched once. */
  readonly recrawl?: RecrawlPolicy | undefined;
  /** Normalized --sitemap URLs of this command line (docs/sitemaps.md); they are seeds too. */
  readonly sitemapUrls?: readonly string[];
  /** --sitemaps: also follow the `Sitemap:` lines of robots.txt (docs/sitemaps.md). */
  readonly sitemapsFromRobots?: boolean;
  /** --metrics-port and --metrics-host: where this node (or supervisor) serves /metrics (docs/operations.md). */
  readonly metrics?: { readonly host: string; readonly port: number };
}

/** Defaults of a polite crawler; the CLI documents each (docs/options.md). */
export const DEFAULTS = Object.freeze({
  dataDir: './crawl-data',
  scope: 'host' as Scope,
  maxDepth: 20,
  maxPages: Infinity,
  maxPagesPerHost: Infinity,
  concurrency: 32,
  perHost: 2,
  delayMs: 1_000,
  timeoutMs: 30_000,
  connectTimeoutMs: 10_000,
  maxBytes: 10 * 1024 * 1024,
  userAgent: 'mountcrawl/0.1 (+https://www.npmjs.com/package/mountcrawl)',
  hookTimeoutMs: 10_000,
  frontierCap: 1_000_000,
  frontierMemory: 100_000,
  maxRedirects: 10,
  maxAttempts: 3,
  retryBaseMs: 30_000,
  retryMaxMs: 3_600_000,
  crawlDelayCapMs: 30_000,
  robotsMaxAgeMs: 24 * 3_600_000,
  heartbeatMs: 1_000,
  deadAfterMs: 15_000,
  mountRetryMs: 60_000,
  maxRepeatedSegments: 3,
  maxPagesPerPattern: Infinity,
  partition: 'host' as Partition,
  warc: false,
  warcMaxSize: 1024 * 1024 * 1024,
});

/**
 * A complete configuration of one node from the defaults, as the CLI would make it with no
 * options but a data directory and a node id; `over` sets the rest. For the simulator and
 * tests, which build nodes without a command line.
 */
export function baseConfig(dataDir: string, nodeId: string, over: Partial<CrawlConfig> = {}): CrawlConfig {
  return Object.freeze({
    ...DEFAULTS,
    dataDir,
    nodeId,
    seedUrls: [],
    include: [],
    exclude: [],
    progress: false,
    json: false,
    verbose: false,
    normalize: DEFAULT_NORMALIZE_OPTIONS,
    sessionParamsExplicit: false,
    robots: true,
    insecure: false,
    denyPrivate: false,
    fsync: false,
    watch: false,
    ...over,
  });
}
