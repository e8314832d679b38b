/**
 * @module load-balancing/lb-servers
 * The two listening servers of a load-balancing worker (the app's on PORT, /ping's on
 * PORT_HEALTH unless they share a port) and how they open and close.
 */
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trackFreshConnections, type FreshConnections } from '../net/fresh-connections.js';
const { createServer } = process.getBuiltinModule('node:http');

export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** A server, and the connections of it that never sent a request (fresh-connections.ts). */
export class TrackedServer {
  readonly server: Server;
  readonly #fresh: FreshConnections;

  constructor(listener: RequestListener) {
    this.server = createServer(listener);
    this.#fresh = trackFreshConnections(this.server);
  }

  listen(port: number, host: string): Promise<number> {
    return listen(this.server, port, host);
  }

  /** Close: idle keep-alive connections and fresh ones go at once; `all`: every connection goes now. */
  close(all = false): Promise<void> {
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
      this.#fresh.closeAll();
      if (all) this.server.closeAllConnections();
    });
  }
}
