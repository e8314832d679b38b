/**
 * Big bodies stay bounded (issue 32 item 5): a /run or /runsync body whose Content-Length
 * cannot fit under maxQueuedBytes is refused 503 SW_QUEUE_FULL with Retry-After before
 * the harness reads or parses it. Proof that it was never parsed: a body that is not JSON
 * at all gets SW_QUEUE_FULL, not the 400 a parsed body gets. Then 100 such posts at once
 * (real sockets, 127.0.0.1), all answered, while /health answers and the queue holds
 * exactly what it held. A body that fits is still taken, and a chunked one (no
 * Content-Length) is still checked after it arrived.
 */
import { afterEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { call, errorCode, eventually, startTestServer, waitFor, type TestServer } from '../../kit/index.js';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const CAP = 1_000;
const queued = JSON.stringify({ input: { pad: 'x'.repeat(800) } });

describe('queue cap before the body is read', () => {
  it('answers 503 SW_QUEUE_FULL with Retry-After to a declared body that cannot fit, without parsing it (not JSON: still 503, not 400)', async () => {
    server = await startTestServer({}, { maxQueuedBytes: CAP });
    const url = server.endpointUrl();
    expect((await call('POST', `${url}/run`, { body: queued })).status).toBe(200);
    for (const route of ['run', 'runsync']) {
      const refused = await call('POST', `${url}/${route}`, { body: 'not json '.repeat(50) });
      expect(refused.status, route).toBe(503);
      expect(errorCode(refused), route).toBe('SW_QUEUE_FULL');
      expect(refused.headers.get('retry-after'), route).toBe('5');
      expect(refused.json, route).toMatchObject({ error: { details: { maxQueuedBytes: CAP, requestBytes: 450 } } });
    }
    // A small bad body that would fit is parsed as before: 400.
    const fits = await call('POST', `${url}/run`, { body: 'not json' });
    expect(fits.status).toBe(400);
    expect(errorCode(fits)).toBe('SW_INVALID_REQUEST');
  });

  it('answers 100 concurrent refused bodies of 256 KB each, /health answers meanwhile, and the queue holds only what it held', async () => {
    server = await startTestServer({}, { maxQueuedBytes: 64 * 1024 });
    const url = server.endpointUrl();
    expect((await call('POST', `${url}/run`, { body: queued })).status).toBe(200);
    // Not JSON: a parsed one would be 400.
    const body = Buffer.alloc(256 * 1024, 'z');
    const agent = new Agent({ connections: 100, headersTimeout: 60_000, bodyTimeout: 60_000 });
    try {
      const posts = Array.from({ length: 100 }, async (_, i) => {
        const answer = await request(`${url}/${i % 2 === 0 ? 'run' : 'runsync'}`, {
          dispatcher: agent,
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
        });
        const text = await answer.body.text();
        return `${answer.statusCode} ${(JSON.parse(text) as { error?: { code?: string } }).error?.code ?? ''}`;
      });
      const health = await call('GET', `${url}/health`);
      expect(health.status).toBe(200);
      const outcomes = await Promise.all(posts);
      const tally: Record<string, number> = {};
      for (const outcome of outcomes) tally[outcome] = (tally[outcome] ?? 0) + 1;
      expect(tally).toEqual({ '503 SW_QUEUE_FULL': 100 });
    } finally {
      await agent.close();
    }
    const after = await call('GET', `${url}/health`);
    expect(after.json).toMatchObject({ jobs: { inQueue: 1 } });
  });

  it('lets in only what fits of bodies arriving together: each one let in holds its declared size until answered', { timeout: 60_000 }, async () => {
    server = await startTestServer({}, { maxQueuedBytes: 1_000_000 });
    const port = server.server.port;
    const size = 200_000;
    // 20 posts declare 200 kB each and send their headers only: 5 fit under the cap together.
    const sockets = Array.from({ length: 20 }, () => {
      const socket = net.connect(port, '127.0.0.1');
      const state = { socket, received: '' };
      socket.on('data', (data: Buffer) => (state.received += data.toString('utf8')));
      socket.on('error', () => undefined);
      socket.write(`POST /v2/ep/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
      return state;
    });
    try {
      // The 15 past the cap are answered 503 without their bodies (after the early answer's drain wait).
      await eventually(() => expect(sockets.filter((one) => one.received.startsWith('HTTP/1.1 503')).length).toBe(15), 30_000, 100);
      // Then the 5 let in send their bodies (not JSON): each is read and parsed, 400.
      for (const one of sockets) if (one.received === '') one.socket.write('z'.repeat(size));
      await eventually(() => expect(sockets.filter((one) => one.received.startsWith('HTTP/1.1 400')).length).toBe(5), 30_000, 100);
      for (const one of sockets.filter((s) => s.received.startsWith('HTTP/1.1 503'))) expect(one.received).toContain('SW_QUEUE_FULL');
    } finally {
      for (const one of sockets) one.socket.destroy();
    }
  });

  it(
    'answers 413 SW_PAYLOAD_TOO_LARGE, not 503 SW_QUEUE_FULL, to a declared size over the route limit (a retry cannot fix it)',
    { timeout: 60_000 },
    async () => {
      server = await startTestServer({}, { maxQueuedBytes: CAP });
      const port = server.server.port;
      const sockets = (['runsync', 'run'] as const).map((route) => {
        const socket = net.connect(port, '127.0.0.1');
        const state = { route, socket, received: '' };
        socket.on('data', (data: Buffer) => (state.received += data.toString('utf8')));
        socket.on('error', () => undefined);
        // Headers only: the answer must not wait for 2 GB.
        socket.write(`POST /v2/ep/${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2000000000\r\n\r\n`);
        return state;
      });
      try {
        await eventually(() => expect(sockets.every((one) => one.received.includes('}}'))).toBe(true), 30_000, 100);
        for (const one of sockets) {
          expect(one.received, one.route).toMatch(/^HTTP\/1\.1 413/);
          expect(one.received, one.route).not.toMatch(/retry-after/i);
          const body = JSON.parse(one.received.slice(one.received.indexOf('{'))) as {
            error: { code: string; message: string; details: Record<string, number> };
          };
          expect(body.error.code, one.route).toBe('SW_PAYLOAD_TOO_LARGE');
          expect(body.error.details, one.route).toEqual({ limitBytes: one.route === 'run' ? 10_000_000 : 20_000_000, declaredBytes: 2_000_000_000 });
          expect(body.error.message, one.route).toContain('2000000000 bytes');
        }
      } finally {
        for (const one of sockets) one.socket.destroy();
      }
    },
  );

  it('still takes a body that fits, and checks a chunked body (no Content-Length) once it arrived', async () => {
    server = await startTestServer({}, { maxQueuedBytes: CAP });
    const url = server.endpointUrl();
    expect((await call('POST', `${url}/run`, { body: queued })).status).toBe(200);
    const chunks = async function* () {
      yield Buffer.from('{"input":{"pad":"');
      yield Buffer.from('y'.repeat(400));
      yield Buffer.from('"}}');
    };
    const chunked = await request(`${url}/run`, { method: 'POST', body: Readable.from(chunks()), headers: { 'content-type': 'application/json' } });
    expect(chunked.statusCode).toBe(503);
    expect(((await chunked.body.json()) as { error: { code: string } }).error.code).toBe('SW_QUEUE_FULL');
    expect((await call('POST', `${url}/run`, { body: '{"input":{"small":1}}' })).status).toBe(200);
  });
});

describe('large bodies are checked in parallel', () => {
  it('checks bodies that arrive together on more than one thread, each answered with its own facts', async () => {
    const { BODY_CHECK_THREADS, bodyCheckThreadCount, checkBodyOffThread } = await import('../../../packages/platform/src/harness/http/off-loop-body-check.js');
    const texts = Array.from({ length: 4 }, (_, i) => `{"input":{"k":"${'v'.repeat(200_000 + i)}"},"n":${i}}`);
    const facts = await Promise.all(texts.map((text) => checkBodyOffThread(text, { maxDepth: 10, maxKeys: 100 })));
    expect(BODY_CHECK_THREADS).toBeGreaterThanOrEqual(2);
    expect(bodyCheckThreadCount()).toBeGreaterThanOrEqual(2);
    facts.forEach((fact, i) => expect(texts[i]?.slice(fact.inputStart, fact.inputEnd)).toBe(`{"k":"${'v'.repeat(200_000 + i)}"}`));
    // Idle, the threads end (each an isolate holding what it last read), and a later body starts one again.
    await waitFor(() => bodyCheckThreadCount() === 0, 'the idle check threads ended', 30_000, 100);
    const again = await checkBodyOffThread('{"input":{"a":1}}', { maxDepth: 10, maxKeys: 100 });
    expect(again).toMatchObject({ keys: 2, depth: 2 });
    expect(bodyCheckThreadCount()).toBe(1);
  });
});
