/**
 * The body read gate (http/body-read-gate.ts, issue 49 item 4) with every read slot held by
 * uploads that keep sending a little:
 * - a request refused anyway (413 over the route's limit, 503 SW_QUEUE_FULL, 401 without
 *   the key, 404 for an unknown route) is answered while the slots are still held, with
 *   the status, code and Retry-After it always had, not after a slot frees (before, its
 *   answer waited for the body to be drained through a slot);
 * - /metrics shows the bodies read, the bodies waiting, and a slot given up when its
 *   socket stalls.
 * Raw sockets on loopback, so that the test decides exactly what each client sends.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BODY_READ_SLOTS } from '../../../packages/platform/src/harness/http/body-read-gate.js';
import { call, startTestServer, waitFor, type TestServer } from '../../kit/index.js';

const KEY = 'gate-key';
/** Each holder declares this much; the queue cap fits all of them, not one 5 MB body more. */
const HOLDER_BYTES = 1_000_000;
const CAP = 8_000_000;

let server: TestServer | undefined;
const sockets: net.Socket[] = [];
const timers: NodeJS.Timeout[] = [];

afterEach(async () => {
  for (const timer of timers.splice(0)) clearInterval(timer);
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.close();
  server = undefined;
});

interface RawPost {
  socket: net.Socket;
  received: string;
}

/** POST `path` with `declared` as Content-Length, sending the headers and `first` bytes of the body. */
function rawPost(path: string, declared: number, first: number, headers: Record<string, string> = {}): RawPost {
  if (!server) throw new Error('no server');
  const socket = net.connect(server.server.port, '127.0.0.1');
  sockets.push(socket);
  const state: RawPost = { socket, received: '' };
  socket.setEncoding('utf8');
  socket.on('data', (data: string) => (state.received += data));
  socket.on('error', () => undefined);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n${extra}Connection: close\r\n\r\n`,
  );
  socket.write('x'.repeat(first));
  return state;
}

/** Keep `post` sending a byte every 100 ms, so that its slot is never taken for stalled. */
function trickle(post: RawPost): void {
  timers.push(setInterval(() => post.socket.write('x'), 100));
}

/** The value of a metric without labels in the Prometheus text of /metrics. */
async function metric(name: string): Promise<number> {
  const answer = await call('GET', `${server?.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
  const line = answer.text.split('\n').find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no ${name} in /metrics: ${answer.text.slice(0, 300)}`);
  return Number(line.slice(name.length + 1));
}

/** Hold every read slot with trickling uploads; answers them once /metrics shows every slot taken. */
async function holdEverySlot(): Promise<RawPost[]> {
  const holders = Array.from({ length: BODY_READ_SLOTS }, () => rawPost('/v2/ep/run', HOLDER_BYTES, 64 * 1024, { authorization: `Bearer ${KEY}` }));
  for (const holder of holders) trickle(holder);
  await waitFor(async () => (await metric('serverless_worker_harness_body_reads_active')) === BODY_READ_SLOTS, 'every read slot held', 20_000);
  return holders;
}

function answerOf(post: RawPost): { status: number; headers: string; body: { error?: { code?: string } } } {
  const match = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([^]*?)\r\n\r\n([^]*)$/.exec(post.received);
  if (!match) throw new Error(`not an HTTP answer: ${post.received.slice(0, 200)}`);
  return { status: Number(match[1]), headers: match[2] ?? '', body: JSON.parse(match[3] ?? '') as { error?: { code?: string } } };
}

describe('the body read gate', () => {
  it('answers requests refused anyway (413, 503 SW_QUEUE_FULL, 401, 404 route) while every read slot is still held', { timeout: 60_000 }, async () => {
    server = await startTestServer({ apiKey: KEY }, { maxQueuedBytes: CAP });
    expect((await call('POST', `${server.endpointUrl()}/run`, { body: { input: {} }, headers: { authorization: `Bearer ${KEY}` } })).status).toBe(200);
    const holders = await holdEverySlot();

    const key = { authorization: `Bearer ${KEY}` };
    const refused = {
      tooLarge: rawPost('/v2/ep/run', 2_000_000_000, 64 * 1024, key),
      queueFull: rawPost('/v2/ep/run', 5_000_000, 64 * 1024, key),
      noKey: rawPost('/v2/ep/run', HOLDER_BYTES, 64 * 1024),
      unknownRoute: rawPost('/v2/ep/no-such-route', HOLDER_BYTES, 64 * 1024, key),
      unknownRouteNoKey: rawPost('/v2/ep/no-such-route', HOLDER_BYTES, 64 * 1024),
    };
    // Each answer is whole once its JSON body closes.
    await waitFor(() => Object.values(refused).every((post) => post.received.endsWith('}}')), 'every refused request answered', 20_000).catch(
      (error: Error) => {
        throw new Error(
          `${error.message}: ${JSON.stringify(Object.fromEntries(Object.entries(refused).map(([name, post]) => [name, post.received.slice(0, 120)])))}`,
        );
      },
    );

    expect(answerOf(refused.tooLarge).status).toBe(413);
    expect(answerOf(refused.tooLarge).body.error?.code).toBe('SW_PAYLOAD_TOO_LARGE');
    expect(answerOf(refused.queueFull).status).toBe(503);
    expect(answerOf(refused.queueFull).body.error?.code).toBe('SW_QUEUE_FULL');
    expect(answerOf(refused.queueFull).headers).toMatch(/retry-after: 5/i);
    expect(answerOf(refused.noKey).status).toBe(401);
    expect(answerOf(refused.noKey).body.error?.code).toBe('SW_UNAUTHORIZED');
    expect(answerOf(refused.unknownRoute).status).toBe(404);
    expect(answerOf(refused.unknownRoute).body.error?.code).toBe('SW_ROUTE_NOT_FOUND');
    // The key is checked first, as before.
    expect(answerOf(refused.unknownRouteNoKey).status).toBe(401);

    // Answered while the slots were held: the holders are still read, none given up, none answered.
    expect(await metric('serverless_worker_harness_body_reads_active')).toBe(BODY_READ_SLOTS);
    expect(await metric('serverless_worker_harness_body_read_stalls_total')).toBe(0);
    for (const holder of holders) expect(holder.received).toBe('');
  });

  it('counts on /metrics the bodies read, the bodies waiting, and a slot given up because its socket stalled', { timeout: 60_000 }, async () => {
    server = await startTestServer({ apiKey: KEY }, { maxQueuedBytes: CAP });
    expect(await metric('serverless_worker_harness_body_reads_active')).toBe(0);
    expect(await metric('serverless_worker_harness_body_reads_waiting')).toBe(0);
    const holders = await holdEverySlot();
    // A stalled one: sends its headers and a first chunk, then nothing.
    const stalled = rawPost('/v2/ep/run', HOLDER_BYTES, 64 * 1024, { authorization: `Bearer ${KEY}` });
    const waiting = [rawPost('/v2/ep/run', HOLDER_BYTES, 64 * 1024, { authorization: `Bearer ${KEY}` }), stalled];
    await waitFor(async () => (await metric('serverless_worker_harness_body_reads_waiting')) === waiting.length, 'two bodies waiting', 20_000);
    expect(await metric('serverless_worker_harness_body_read_stalls_total')).toBe(0);

    // One holder stops sending: its slot is given up, counted, and a waiting body takes it.
    const [first] = timers;
    clearInterval(first);
    await waitFor(async () => (await metric('serverless_worker_harness_body_read_stalls_total')) >= 1, 'a stalled slot given up', 20_000);
    await waitFor(async () => (await metric('serverless_worker_harness_body_reads_waiting')) < waiting.length, 'a waiting body let in', 20_000);
    expect(holders.length).toBe(BODY_READ_SLOTS);
  });
});
