/**
 * @module net/fresh-connections
 * Connections that have sent no request yet. Node's `server.close()` waits for them
 * until its headers timeout (60 s): it closes idle keep-alive connections, but not one
 * that never sent a request, such as a browser's or a load balancer's speculative
 * preconnect, or the socket a client opens after aborting a stream. The servers of this
 * package (the harness, a load-balancing worker's ports, the metrics port) destroy them
 * when they close, and any connection that arrives while they close.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface FreshConnections {
  /** Destroy every connection that has sent no request, now and from now on. */
  closeAll(): void;
}

export function trackFreshConnections(server: Server): FreshConnections {
  const fresh = new Set<Socket>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    fresh.add(socket);
    socket.once('close', () => fresh.delete(socket));
  });
  server.on('request', (request: { socket: Socket }) => {
    fresh.delete(request.socket);
  });
  return {
    closeAll() {
      closing = true;
      for (const socket of fresh) socket.destroy();
      fresh.clear();
    },
  };
}
