import { Counter, Gauge, Registry } from 'prom-client';
import type { MetricSample } from './metric-sample.js';

/** Where the metrics come from at each scrape: the last sample of each node, by node id. */
export type SampleSource = () => Iterable<readonly [node: string, sample: MetricSample]>;

/** The states a node's record says (src/cluster/node-record.ts), each a series of mountcrawl_node_state. */
const STATES = ['starting', 'crawling', 'waiting', 'idle', 'paused', 'stopping', 'draining', 'done'] as const;

type Series = Counter<string> | Gauge<string>;
type Label = Record<string, string>;

/**
 * The Prometheus registry of a node, or of a supervisor's nodes (docs/operations.md,
 * "Metrics"): every series is labelled by node and is read from the samples only when
 * scraped, so a node that is never scraped pays nothing. Counters restart at 0 when a node
 * restarts, which Prometheus' rate() takes for a counter reset.
 */
export function crawlRegistry(samples: SampleSource): Registry {
  const registry = new Registry();
  const each = (series: Series, values: (s: MetricSample) => Iterable<readonly [Label, number]>): void => {
    series.reset();
    for (const [node, s] of samples()) {
      for (const [labels, v] of values(s)) {
        if (series instanceof Counter) series.inc({ node, ...labels }, v);
        else series.set({ node, ...labels }, v);
      }
    }
  };
  const one = (f: (s: MetricSample) => number) => (s: MetricSample) => [[{}, f(s)] as const];
  const by = (label: string, f: (s: MetricSample) => Readonly<Record<string, number>>) => (s: MetricSample) =>
    Object.entries(f(s)).map(([k, v]) => [{ [label]: k }, v] as const);

  const define = (
    Kind: typeof Counter | typeof Gauge,
    name: string,
    help: string,
    labels: string[],
    values: (s: MetricSample) => Iterable<readonly [Label, number]>,
  ): void => {
    new Kind({
      name: `mountcrawl_${name}`,
      help,
      labelNames: ['node', ...labels],
      registers: [registry],
      collect(this: Series) {
        each(this, values);
      },
    });
  };
  define(Counter, 'pages_total', 'Links records written (pages, redirects, non-HTML), by kind and HTTP status', ['kind', 'status'], (s) =>
    Object.entries(s.pages).map(([key, v]) => {
      const [kind = '', status = ''] = key.split(' ');
      return [{ kind, status }, v] as const;
    }),
  );
  define(
    Counter,
    'requests_total',
    'HTTP requests sent (pages, redirect hops, robots.txt, sitemaps), by the status of the answer (none: no answer)',
    ['status'],
    by('status', (s) => s.requests),
  );
  define(
    Counter,
    'bytes_total',
    'Body bytes stored',
    [],
    one((s) => s.bytes),
  );
  define(
    Counter,
    'errors_total',
    'Errs records written, by code (HTTP_404, FETCH_TIMEOUT, ...)',
    ['code'],
    by('code', (s) => s.errors),
  );
  define(
    Counter,
    'final_errors_total',
    'URL failures that became final, by code',
    ['code'],
    by('code', (s) => s.finalErrors),
  );
  define(
    Counter,
    'politeness_waits_total',
    'Times a host with work waited for its next request, by rule',
    ['rule'],
    by('rule', (s) => s.politenessWaits),
  );
  define(
    Counter,
    'cut_total',
    'URLs and pages cut off on purpose, by reason',
    ['reason'],
    by('reason', (s) => s.cut),
  );
  define(
    Counter,
    'heartbeats_total',
    'Heartbeats run',
    [],
    one((s) => s.heartbeats.beats),
  );
  define(
    Counter,
    'heartbeat_seconds_total',
    'Time spent in heartbeats',
    [],
    one((s) => s.heartbeats.totalMs / 1000),
  );
  define(
    Gauge,
    'heartbeat_max_seconds',
    'Longest heartbeat of the run',
    [],
    one((s) => s.heartbeats.maxMs / 1000),
  );
  define(
    Gauge,
    'queued_urls',
    'URLs queued in memory',
    [],
    one((s) => s.queued),
  );
  define(
    Gauge,
    'in_flight_requests',
    'Requests in flight',
    [],
    one((s) => s.inFlight),
  );
  define(
    Gauge,
    'hosts_held',
    'Hosts this node holds the lease of and crawls',
    [],
    one((s) => s.hostsHeld),
  );
  define(
    Gauge,
    'hosts_lent',
    'Hosts this node lent to peers',
    [],
    one((s) => s.hostsLent),
  );
  define(
    Gauge,
    'nodes_alive',
    'Live nodes of the crawl as this node sees them',
    [],
    one((s) => s.nodesAlive),
  );
  define(Gauge, 'node_state', 'The node state: 1 for the current one', ['state'], (s) =>
    STATES.map((state) => [{ state }, s.state === state ? 1 : 0] as const),
  );
  return registry;
}
