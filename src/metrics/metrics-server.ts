import { createServer, type Server } from 'node:http';
import { ExitCode, FatalError, describeError } from '../errors.js';
import type { Registry } from 'prom-client';
import { crawlRegistry, type SampleSource } from './crawl-metrics.js';

export { sampleOf } from './metric-sample.js';

/** A listening /metrics endpoint. */
export interface MetricsServer {
  /** The address it listens on, `http://host:port/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `registry` at GET /metrics in the Prometheus text format on `host:port` (port 0: any
 * free port). A port that cannot be had is a BAD_OPTION (exit 2) naming it, before the crawl starts.
 */
export async function serveMetrics(registry: Registry, host: string, port: number): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${describeError(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((err: unknown) => {
    throw new FatalError('BAD_OPTION', `--metrics-port ${port} on ${host}: ${describeError(err)}`, ExitCode.USAGE);
  });
  // Scrapes must not keep a node that has ended alive.
  server.unref();
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Serves the metrics of `samples` where --metrics-port and --metrics-host say. */
export function serveSamples(where: { readonly host: string; readonly port: number }, samples: SampleSource): Promise<MetricsServer> {
  return serveMetrics(crawlRegistry(samples), where.host, where.port);
}
