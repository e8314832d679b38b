/**
 * Connections stay bounded (issue 32 item 6), over real sockets on 127.0.0.1:
 * - past maxConnections a new connection is closed at once, without an answer, so the
 *   harness never holds more than its cap (20 000 idle connections used to fill the
 *   descriptor table: new connections and outgoing calls failed with EMFILE);
 * - an idle connection that sends no request is closed after headersTimeoutMs;
 * - a body sent a byte at a time is cut off after requestTimeoutMs (it used to stay open
 *   for minutes), while an answer that takes longer than that (a /runsync wait) is not;
 * - the default cap lies below the process's descriptor limit, a reserve kept.
 * 150 sockets against a cap of 50; every wait bounded.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { descriptorLimit, descriptorReserve, maxConnectionsFor } from '../../packages/platform/src/harness/http/connection-limits.js';
import { call, eventually, startTestServer, type TestServer } from '../kit/index.js';

let server: TestServer | undefined;
const sockets: net.Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.close();
  server = undefined;
});

interface Watched {
  readonly socket: net.Socket;
  received: string;
  closed: boolean;
}

function open(port: number): Promise<Watched> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    sockets.push(socket);
    const watched: Watched = { socket, received: '', closed: false };
    socket.on('data', (data: Buffer) => (watched.received += data.toString('utf8')));
    socket.on('close', () => (watched.closed = true));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve(watched));
    socket.once('error', reject);
  });
}

describe('connection cap and slow clients', () => {
  it('closes connections past maxConnections at once and idle ones after headersTimeoutMs, then serves again', { timeout: 60_000 }, async () => {
    server = await startTestServer({ maxConnections: 50, headersTimeoutMs: 1_500, requestTimeoutMs: 5_000 });
    const port = server.server.port;
    const watched: Watched[] = [];
    for (let i = 0; i < 150; i++) watched.push(await open(port));
    // The 100 past the cap are closed without a byte of answer.
    await eventually(() => expect(watched.filter((one) => one.closed && one.received === '').length).toBeGreaterThanOrEqual(100), 10_000, 50);
    expect(server.server.app.server.maxConnections).toBe(50);
    // The 50 taken are idle: closed after the headers timeout, with the JSON answer saying why.
    await eventually(() => expect(watched.filter((one) => one.closed).length).toBe(150), 15_000, 100);
    const answered = watched.filter((one) => one.received !== '');
    expect(answered.length).toBeLessThanOrEqual(50);
    expect(answered.length).toBeGreaterThan(0);
    for (const one of answered) expect(one.received).toContain('did not arrive in time');
    // Room again: a request is served.
    const health = await call('GET', `${server.endpointUrl()}/health`);
    expect(health.status).toBe(200);
  });

  it('cuts off a body sent a byte at a time after requestTimeoutMs, and lets a /runsync answer take longer than that', { timeout: 60_000 }, async () => {
    server = await startTestServer({ headersTimeoutMs: 1_000, requestTimeoutMs: 2_000 });
    const port = server.server.port;
    const slow = await open(port);
    slow.socket.write(`POST /v2/ep/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"input":{"a":"`);
    let sent = 0;
    const drip = setInterval(() => {
      if (!slow.socket.writable) return;
      slow.socket.write('a');
      sent++;
    }, 200);
    try {
      await eventually(() => expect(slow.closed).toBe(true), 20_000, 100);
    } finally {
      clearInterval(drip);
    }
    expect(slow.received).toContain('did not arrive in time');
    expect(sent).toBeLessThan(1000);
    // Nothing was queued from it.
    expect((await call('GET', `${server.endpointUrl()}/health`)).json).toMatchObject({ jobs: { inQueue: 0 } });
    // An answer may take longer than requestTimeoutMs: /runsync waits 3 s for a job nobody takes.
    const waited = await call('POST', `${server.endpointUrl()}/runsync?wait=3000`, { body: '{"input":{}}' });
    expect(waited.status).toBe(200);
    expect(waited.json).toMatchObject({ status: 'IN_QUEUE' });
  });

  it('keeps the default cap below the descriptor limit, a quarter (at least 128) kept for outgoing calls', async () => {
    expect(maxConnectionsFor(1_024)).toBe(768);
    expect(maxConnectionsFor(256)).toBe(128);
    expect(maxConnectionsFor(1_048_576)).toBe(1_048_576 - 262_144);
    server = await startTestServer();
    const limit = descriptorLimit();
    expect(limit).toBeDefined();
    const cap = server.server.app.server.maxConnections;
    expect(cap).toBe(maxConnectionsFor(limit ?? 0));
    expect(cap + descriptorReserve(limit ?? 0)).toBeLessThanOrEqual(limit ?? 0);
  });
});
