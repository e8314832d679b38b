/**
 * Issue 46 item 5: the platform transport's HTTP client opens at most `maxConnections` sockets
 * to the platform at once (default MAX_CONNECTIONS); calls past them wait for a free one and
 * all land. Seen from a real server on 127.0.0.1 that counts the connections open at once
 * while its answers are held back.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CONNECTIONS, PlatformHttp } from '../../../src/transports/platform/http-client.js';
import { resolvePlatformSettings } from '../../../src/transports/platform/options.js';

interface CountingServer {
  readonly origin: string;
  /** The most connections open at once so far. */
  peak(): number;
  close(): Promise<void>;
}

/** Answers every request 200 after `delayMs`, counting the connections open at once. */
async function countingServer(delayMs: number): Promise<CountingServer> {
  let open = 0;
  let peak = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => setTimeout(() => response.end('{}'), delayMs));
  });
  server.on('connection', (socket) => {
    open++;
    peak = Math.max(peak, open);
    socket.on('close', () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    peak: () => peak,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let server: CountingServer | undefined;
let client: PlatformHttp | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await server?.close();
  server = undefined;
});

describe('connections to the platform', () => {
  it('opens at most maxConnections at once; the posts past them wait and all land', async () => {
    server = await countingServer(100);
    client = new PlatformHttp({ maxConnections: 4 });
    const origin = server.origin;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => client!.post(`${origin}/job-done/w/${i}`, '{}', { timeoutMs: 10_000 })));
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 20 }, () => 200));
    expect(server.peak()).toBe(4);
  });

  it(`opens at most ${MAX_CONNECTIONS} by default, and uses them`, async () => {
    server = await countingServer(200);
    client = new PlatformHttp();
    const origin = server.origin;
    const answers = await Promise.all(
      Array.from({ length: 3 * MAX_CONNECTIONS }, (_, i) => client!.post(`${origin}/job-done/w/${i}`, '{}', { timeoutMs: 10_000 })),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(server.peak()).toBe(MAX_CONNECTIONS);
  });

  it('takes maxConnections from 4 to 1024 in the transport settings, 32 by default', () => {
    expect(MAX_CONNECTIONS).toBe(32);
    expect(resolvePlatformSettings().maxConnections).toBe(32);
    expect(resolvePlatformSettings({ maxConnections: 4 }).maxConnections).toBe(4);
    for (const bad of [3, 1_025, 8.5]) {
      expect(() => resolvePlatformSettings({ maxConnections: bad }), String(bad)).toThrow(
        /maxConnections must be (from 4 to 1024|a whole number of) connections/,
      );
    }
  });
});
