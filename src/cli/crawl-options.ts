import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { DEFAULTS, type CrawlConfig, type Partition, type Scope } from '../config/crawl-config.js';
import {
  defaultNodeId,
  parseChoice,
  parseNodeId,
  parsePort,
  parseRegex,
  parseSeconds,
  parseSize,
  parseWhole,
} from '../config/parse-values.js';
import { ExitCode, FatalError } from '../errors.js';
import { DEFAULT_MAX_URL_LENGTH, DEFAULT_SESSION_PARAMS } from '../url/normalize.js';
import { readSeedsFile, seedOrFail } from './seeds-file.js';
import { readCookieFile } from '../fetch/cookie-file.js';
import { parseHeaderOption } from '../fetch/request-headers.js';
import { parseKeepTypes } from '../fetch/keep-types.js';
import { proxyFrom } from './proxy-option.js';
import { buildRecrawlPolicy } from './recrawl-options.js';

/** The data directory: --data, else $MOUNTCRAWL_DATA, else ./crawl-data. */
export function dataDirOption(cmd: Command): Command {
  return cmd.option('--data <dir>', 'data directory (default: $MOUNTCRAWL_DATA or ./crawl-data)');
}

export function resolveDataDir(value: string | undefined, env: NodeJS.ProcessEnv): string {
  return value ?? (env.MOUNTCRAWL_DATA || DEFAULTS.dataDir);
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Declares every option of `crawl` (docs/options.md describes each). */
export function addCrawlOptions(cmd: Command): Command {
  const d = DEFAULTS;
  dataDirOption(cmd);
  return cmd
    .option('--seeds-file <file>', 'file with one seed URL per line (# starts a comment; bad lines are reported and skipped)')
    .option('--scope <scope>', "follow links within: host (the seeds' hosts), domain, any", d.scope)
    .option('--include <regex>', 'only crawl URLs matching this (repeatable)', collect)
    .option('--exclude <regex>', 'never crawl URLs matching this (repeatable)', collect)
    .option('--max-depth <n>', 'links followed from a seed', String(d.maxDepth))
    .option('--max-pages <n>', 'pages this node fetches in this run, then stops', 'unlimited')
    .option('--max-pages-per-host <n>', 'pages fetched per host in this run', 'unlimited')
    .option('--max-pages-per-pattern <n>', 'pages per host per URL shape (digits as 0) in this run', 'unlimited')
    .option('--max-repeated-segments <n>', 'a path segment repeated this often marks a trap', String(d.maxRepeatedSegments))
    .option('--concurrency <n>', 'requests in flight in this node', String(d.concurrency))
    .option('--per-host <n>', 'requests in flight per host (whole cluster)', String(d.perHost))
    .option('--delay <ms>', 'least gap between request starts on one host, ms (0: none)', String(d.delayMs))
    .option('--timeout <seconds>', 'total deadline of one request, body included', String(d.timeoutMs / 1000))
    .option('--connect-timeout <seconds>', 'deadline to connect', String(d.connectTimeoutMs / 1000))
    .option('--max-bytes <size>', 'decoded bytes kept per page (10MiB, 512k, ...)', '10MiB')
    .option('--max-redirects <n>', 'redirect hops followed per URL', String(d.maxRedirects))
    .option('--max-attempts <n>', 'attempts of a transiently failing URL', String(d.maxAttempts))
    .option('--retry-delay <seconds>', 'wait after the first transient failure (doubles each time)', String(d.retryBaseMs / 1000))
    .option('--max-retry-delay <seconds>', 'longest wait between attempts', String(d.retryMaxMs / 1000))
    .option('--user-agent <string>', 'User-Agent header (also matched against robots.txt)', d.userAgent)
    .option('--node-id <id>', "this node's id (default: host name and pid)")
    .option(
      '--hook <file>',
      'an ES module of middleware: filter, beforeFetch, afterFetch, onPage, priority (repeatable, run in order; docs/hooks.md)',
      collect,
    )
    .option('--hook-timeout <seconds>', 'longest wait for one --hook call before its fallback', String(d.hookTimeoutMs / 1000))
    .option('--session-params <names>', "comma-separated parameters stripped from URLs ('' for none)", DEFAULT_SESSION_PARAMS.join(','))
    .option('--max-url-length <n>', 'longer URLs are dropped', String(DEFAULT_MAX_URL_LENGTH))
    .option('--frontier-cap <n>', 'URLs queued (in memory or spilled); more wait on the mount', String(d.frontierCap))
    .option(
      '--frontier-memory <n>',
      "URLs of the queues held in memory; a host's queue beyond it spills to a local file",
      String(d.frontierMemory),
    )
    .option('--spill-dir <dir>', 'where spill files go (default: the OS temporary directory)')
    .option('--ignore-robots', 'do not fetch or obey robots.txt')
    .option('--keep <types>', 'also store bodies of these non-HTML media types in files/ (application/pdf,image/*), within --max-bytes')
    .option('--header <header>', "an extra request header 'Name: value' (repeatable)", collect)
    .option('--cookie-file <file>', 'send the cookies of this Netscape cookies.txt file (as curl and wget read it)')
    .option('--proxy <url>', 'send every request through this HTTP proxy (default: $HTTPS_PROXY / $HTTP_PROXY, minus $NO_PROXY)')
    .option('--obey-rel-nofollow', 'do not follow links marked rel="nofollow" (meta robots and X-Robots-Tag are always obeyed)')
    .option('--crawl-delay-cap <seconds>', 'longest robots.txt Crawl-delay honoured', String(d.crawlDelayCapMs / 1000))
    .option('--insecure', 'accept invalid TLS certificates')
    .option('--deny-private', 'refuse private, loopback and link-local addresses (after DNS)')
    .option('--fsync', 'fsync every file before it is renamed into place')
    .option('--warc', 'also write every request and response to WARC files under warc/ (docs/warc.md)')
    .option('--warc-max-size <size>', 'start a new WARC file before one passes this size', '1GiB')
    .option('--watch', 'keep polling for new seeds and links instead of exiting when done')
    .option('--partition <by>', 'share work out by host (politeness per cluster) or url', d.partition)
    .option('--no-handoff', "find links to this node's hosts by reading every links record, not from hand-off files")
    .option('--no-lend', 'never lend hosts waiting for a request slot to a node with fewer waiting or slots to spare')
    .option('--processes <n>', 'start N nodes on this machine under one supervisor (auto: one per two cores)', '1')
    .option('--heartbeat <ms>', 'how often a node rewrites its heartbeat', String(d.heartbeatMs))
    .option('--dead-after <ms>', 'a node whose heartbeat stops this long is dead', String(d.deadAfterMs))
    .option('--mount-retry <seconds>', 'how long to wait for a failing mount before exiting', String(d.mountRetryMs / 1000))
    .option('--no-progress', 'no progress display (errors are still printed)')
    .option('--json', 'log lines as JSON objects')
    .option('--verbose', "also log the details of the crawl's machinery (reseeds, membership, lending); --json has them too")
    .option('--recrawl-after <duration>', 'fetch a page again when its last fetch is older (0s, 90m, 7d; docs/recrawl.md)')
    .option('--recrawl-adaptive', 'shorten the interval of pages that change, lengthen it for the others')
    .option('--recrawl-min <duration>', 'shortest adaptive interval (default: --recrawl-after / 4)')
    .option('--recrawl-max <duration>', 'longest adaptive interval (default: --recrawl-after x 8)')
    .option('--sitemap <url>', 'a sitemap, sitemap index or feed whose URLs are crawled (repeatable; docs/sitemaps.md)', collect)
    .option('--sitemaps', "also follow the Sitemap: lines of each host's robots.txt (docs/sitemaps.md)")
    .option('--metrics-port <port>', 'serve Prometheus metrics at /metrics on this port (docs/operations.md)')
    .option('--metrics-host <address>', 'the address --metrics-port listens on', '127.0.0.1');
}

/** The raw option values commander hands over for `crawl`. */
export type CrawlOptionValues = Record<string, string | string[] | boolean | undefined>;

/**
 * Turns the command line of `crawl` into one frozen CrawlConfig, checking every value
 * (validated once, at the edge: docs/architecture.md, "Inputs"). Throws FatalError(BAD_OPTION | BAD_URL).
 */
export function buildCrawlConfig(
  urls: readonly string[],
  o: CrawlOptionValues,
  env: NodeJS.ProcessEnv,
  explicit: (option: string) => boolean = () => false,
  warn: (line: string) => void = () => undefined,
): CrawlConfig {
  const str = (name: string): string => String(o[name]);
  const sessionParams = new Set(
    str('sessionParams')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter((s) => s !== ''),
  );
  const normalize = Object.freeze({ sessionParams, maxUrlLength: parseWhole('--max-url-length', str('maxUrlLength'), 16) });
  // Seeds on the command line must all be good; a seeds file's bad lines are reported and skipped.
  const sitemapUrls = ((o.sitemap as string[] | undefined) ?? []).map((raw) => seedOrFail(raw, normalize));
  const seedUrls = [
    ...urls.map((raw) => seedOrFail(raw, normalize)),
    ...sitemapUrls,
    ...(typeof o.seedsFile === 'string' ? readSeedsFile(o.seedsFile, normalize, warn) : []),
  ];
  const heartbeatMs = parseWhole('--heartbeat', str('heartbeat'), 50);
  const deadAfterMs = parseWhole('--dead-after', str('deadAfter'), 1);
  if (deadAfterMs < 3 * heartbeatMs) {
    throw new FatalError(
      'BAD_OPTION',
      `--dead-after (${deadAfterMs} ms) must be at least 3 times --heartbeat (${heartbeatMs} ms)`,
      ExitCode.USAGE,
    );
  }
  const config: CrawlConfig = {
    dataDir: resolveDataDir(o.data as string | undefined, env),
    seedUrls,
    scope: parseChoice<Scope>('--scope', str('scope'), ['host', 'domain', 'any']),
    include: ((o.include as string[] | undefined) ?? []).map((r) => parseRegex('--include', r)),
    exclude: ((o.exclude as string[] | undefined) ?? []).map((r) => parseRegex('--exclude', r)),
    maxDepth: parseWhole('--max-depth', str('maxDepth'), 0, true),
    maxPages: parseWhole('--max-pages', str('maxPages'), 1, true),
    maxPagesPerHost: parseWhole('--max-pages-per-host', str('maxPagesPerHost'), 1, true),
    maxPagesPerPattern: parseWhole('--max-pages-per-pattern', str('maxPagesPerPattern'), 1, true),
    maxRepeatedSegments: parseWhole('--max-repeated-segments', str('maxRepeatedSegments'), 2, true),
    concurrency: parseWhole('--concurrency', str('concurrency'), 1),
    perHost: parseWhole('--per-host', str('perHost'), 1),
    delayMs: parseWhole('--delay', str('delay'), 0),
    timeoutMs: parseSeconds('--timeout', str('timeout')),
    connectTimeoutMs: parseSeconds('--connect-timeout', str('connectTimeout')),
    maxBytes: parseSize('--max-bytes', str('maxBytes')),
    maxRedirects: parseWhole('--max-redirects', str('maxRedirects'), 0),
    maxAttempts: parseWhole('--max-attempts', str('maxAttempts'), 1),
    retryBaseMs: parseSeconds('--retry-delay', str('retryDelay'), true),
    retryMaxMs: parseSeconds('--max-retry-delay', str('maxRetryDelay'), true),
    userAgent: str('userAgent'),
    hookTimeoutMs: parseSeconds('--hook-timeout', str('hookTimeout')),
    nodeId: typeof o.nodeId === 'string' ? parseNodeId('--node-id', o.nodeId) : defaultNodeId(hostname(), process.pid),
    progress: o.progress !== false,
    json: o.json === true,
    verbose: o.verbose === true,
    normalize,
    sessionParamsExplicit: explicit('sessionParams'),
    frontierCap: parseWhole('--frontier-cap', str('frontierCap'), 1),
    frontierMemory: parseWhole('--frontier-memory', str('frontierMemory'), 1),
    ...(typeof o.spillDir === 'string' ? { spillDir: spillDirOrFail(o.spillDir) } : {}),
    robots: o.ignoreRobots !== true,
    obeyRelNofollow: o.obeyRelNofollow === true,
    ...(typeof o.keep === 'string' ? { keepTypes: parseKeepTypes(o.keep) } : {}),
    headers: ((o.header as string[] | undefined) ?? []).map(parseHeaderOption),
    ...(typeof o.cookieFile === 'string' ? { cookies: readCookieFile(o.cookieFile) } : {}),
    ...proxyFrom(o.proxy, env),
    crawlDelayCapMs: parseSeconds('--crawl-delay-cap', str('crawlDelayCap'), true),
    robotsMaxAgeMs: DEFAULTS.robotsMaxAgeMs,
    insecure: o.insecure === true,
    denyPrivate: o.denyPrivate === true,
    fsync: o.fsync === true,
    warc: o.warc === true,
    warcMaxSize: parseSize('--warc-max-size', str('warcMaxSize')),
    watch: o.watch === true,
    partition: parseChoice<Partition>('--partition', str('partition'), ['host', 'url']),
    handoff: o.handoff !== false,
    lend: o.lend !== false,
    heartbeatMs,
    deadAfterMs,
    mountRetryMs: parseSeconds('--mount-retry', str('mountRetry'), true),
    recrawl: buildRecrawlPolicy(o),
    ...(sitemapUrls.length > 0 ? { sitemapUrls } : {}),
    ...(o.sitemaps === true ? { sitemapsFromRobots: true } : {}),
    ...(typeof o.metricsPort === 'string'
      ? { metrics: { host: str('metricsHost'), port: parsePort('--metrics-port', o.metricsPort) } }
      : {}),
  };
  return Object.freeze(config);
}

/** --spill-dir must name a directory that exists (the node makes its own directory in it). */
function spillDirOrFail(dir: string): string {
  if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() !== true) {
    throw new FatalError('BAD_OPTION', `--spill-dir ${dir}: not a directory`, ExitCode.USAGE);
  }
  return resolve(dir);
}
