/**
 * @module test/kit/ports
 * Loopback ports for tests that must name a port before something listens on it.
 */
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (the kernel picks it; it is released at once, for the caller to bind). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A port on 127.0.0.1 that nothing listens on (just released): a connection to it is refused. */
export const closedPort = freePort;
