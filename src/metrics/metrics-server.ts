/**
 * @module metrics/metrics-server
 * A tiny HTTP server for `GET /metrics` in platform mode, where the worker has no
 * harness server of its own. Off unless a port is given (option or environment).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trackFreshConnections } from '../net/fresh-connections.js';
import type { Metrics } from './create-metrics.js';
const { createServer } = process.getBuiltinModule('node:http');

export interface MetricsServer {
  /** `http://host:port/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Serve `metrics` at `/metrics` on `host:port` (port 0 picks a free one). */
export async function startMetricsServer(metrics: Metrics, port: number, host = '0.0.0.0'): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    if (request.url?.split('?')[0] !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'SW_ROUTE_NOT_FOUND', message: 'Only GET /metrics is served here' } }));
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'SW_METHOD_NOT_ALLOWED', message: '/metrics answers GET only' } }));
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  const fresh = trackFreshConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  server.unref();
  const address = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    url: `http://${shownHost}:${address.port}/metrics`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // A scraper's connection that never sent a request would hold close for Node's 60 s headers timeout.
        fresh.closeAll();
      }),
  };
}
