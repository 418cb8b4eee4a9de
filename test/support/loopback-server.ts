import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A plain HTTP server on 127.0.0.1, port 0, for unit tests of one HTTP exchange at a time. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  /** Every request received, in order (method, path and headers as sent). */
  readonly requests: IncomingMessage[];
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export async function startLoopbackServer(handle: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<LoopbackServer> {
  const requests: IncomingMessage[] = [];
  let connections = 0;
  const server: Server = createServer((req, res) => {
    requests.push(req);
    Promise.resolve(handle(req, res)).catch((err: unknown) => {
      res.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  });
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on (it was bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
