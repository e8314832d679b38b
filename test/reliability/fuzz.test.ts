/**
 * @module test/reliability/fuzz.test
 * Bad input: a property-based fuzz (fast-check, seeded, bounded in runs and time) of
 * every route of the harness server, sent raw with node:http so that paths, queries,
 * headers and bodies reach the server as generated (malformed percent escapes, odd
 * methods, wrong content types, broken JSON, bodies past the limits). For every answer:
 * no 5xx, and every error is a JSON body whose `error.code` is one of ERROR_CODES or PLATFORM_ERROR_CODES. The
 * server (this process) must still serve afterwards. Only 127.0.0.1 is ever called:
 * webhook URLs that would reach elsewhere are rewritten to a closed local port.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { ERROR_CODES } from '../../src/job/index.js';
import { PLATFORM_ERROR_CODES } from '../../packages/platform/src/job/platform-error-codes.js';
import { startLocalWorker, type LocalWorker } from '../../src/local/local-worker.js';
import { resolveOptions } from '../../src/worker/index.js';
import { printFigures } from './support/figures.js';
import { TestClient } from './support/http.js';
import { QueueCaller } from './support/queue.js';
import { startReliabilityServer, type ReliabilityServer } from './support/reliability-server.js';
import { HARNESS_ROUTES, STREAMING_ROUTES, fillPath, registeredRouteCount, type RouteSpec } from './support/routes.js';

const SEED = Number(process.env.RELIABILITY_SEED ?? 20_261_121);
const RUNS_PER_ROUTE = 30;
/** Bound of one route's fuzz, including shrinking a failure. */
const ROUTE_TIME_LIMIT_MS = 20_000;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
const CLOSED_LOCAL_URL = 'http://127.0.0.1:9/hook';

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

interface RawAnswer {
  status: number;
  contentType: string;
  text: string;
}

function send(origin: string, fuzz: FuzzRequest): Promise<RawAnswer> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      // A connection per request: one the server closed after a malformed request is never reused.
      { host: url.hostname, port: url.port, method: fuzz.method, path: fuzz.path, headers: fuzz.headers, agent: false, timeout: 20_000 },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(parts).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 20 s')));
    req.on('error', reject);
    req.end(fuzz.body);
  });
}

// ---------------------------------------------------------------- arbitraries

/** Path segments: plain, percent-encoded text of any kind, malformed escapes, traversal, very long. */
const segment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._~-]{1,40}$/),
  fc.string({ unit: 'grapheme', maxLength: 30 }).map((text) => encodeURIComponent(text)),
  fc.constantFrom('..', '.', '%', '%zz', '%00', '%2F', 'a%2Fb', '%ff%fe', '%E2%82', '\u00e9t\u00e9', '~', '-', 'sync-x'),
  fc.integer({ min: 129, max: 400 }).map((n) => 'a'.repeat(n)),
);

const queryValue = fc.oneof(
  fc.integer({ min: -10, max: 400_000 }).map(String),
  fc.constantFrom('', '-1', '1.5', '1e9', 'NaN', 'true', '0x10', '99999999999999999999', '%zz', 'IN_QUEUE,COMPLETED', 'bogus,,'),
  fc.string({ maxLength: 20 }).map((text) => encodeURIComponent(text)),
);
const queryKey = fc.oneof(
  fc.constantFrom('wait', 'ttl', 'limit', 'status', 'batch_size', 'job_in_progress', 'job_id', 'runpod_version', 'check', 'reason', 'isStream', 'gpu'),
  fc.stringMatching(/^[a-z_]{1,12}$/),
);
const query = fc
  .array(fc.tuple(queryKey, queryValue), { maxLength: 4 })
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`));

const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/octet-stream',
  'application/json; charset=latin1',
  'garbage',
);

const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 40 });
const headers = fc.record(
  {
    'content-type': contentType,
    authorization: fc.oneof(headerValue, fc.constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz')),
    accept: fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html'),
    'x-fuzz': headerValue,
  },
  { requiredKeys: [] },
);

const weirdNumber = fc.oneof(fc.integer({ min: -1_000, max: 1_000_000_000 }), fc.double(), fc.constantFrom(5_000, 10_000, 604_800_000, 604_800_001, -0));
const webhook = fc.oneof(
  fc.constantFrom(
    'file:///etc/passwd',
    'ftp://127.0.0.1/x',
    'javascript:alert(1)',
    'data:text/plain,hi',
    'ws://127.0.0.1:9/x',
    'gopher://127.0.0.1:9/',
    '',
    CLOSED_LOCAL_URL,
  ),
  fc.string({ maxLength: 30 }),
);
const jobLike = fc.record(
  {
    input: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })),
    webhook,
    webhookV2: webhook,
    policy: fc.oneof(
      fc.jsonValue({ maxDepth: 1 }),
      fc.record({ executionTimeout: weirdNumber, ttl: weirdNumber, lowPriority: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] }),
    ),
    s3Config: fc.oneof(
      fc.jsonValue({ maxDepth: 1 }),
      fc.record(
        { accessId: fc.string(), accessSecret: fc.string(), bucketName: fc.jsonValue({ maxDepth: 1 }), endpointUrl: fc.string() },
        { requiredKeys: [] },
      ),
    ),
    messages: fc.array(fc.record({ role: fc.string({ maxLength: 10 }), content: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] }), { maxLength: 3 }),
    stream: fc.jsonValue({ maxDepth: 0 }),
  },
  { requiredKeys: [] },
);
const workerLike = fc.record(
  {
    output: fc.jsonValue({ maxDepth: 2 }),
    error: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.json()),
    status: fc.constantFrom('IN_PROGRESS', 'COMPLETED', 'x'),
    stopPod: fc.jsonValue({ maxDepth: 0 }),
    metrics: fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.record({ stream_index: weirdNumber }, { requiredKeys: [] })),
  },
  { requiredKeys: [] },
);
const managementLike = fc.record(
  {
    name: fc.oneof(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 0 })),
    imageName: fc.oneof(fc.constant('ghcr.io/x/worker:1'), fc.string({ maxLength: 20 })),
    category: fc.constantFrom('NVIDIA', 'AMD', 'CPU', 'TPU', 3),
    isServerless: fc.jsonValue({ maxDepth: 0 }),
    dataCenterId: fc.string({ maxLength: 8 }),
    size: weirdNumber,
    templateId: fc.string({ maxLength: 12 }),
    gpuTypeIds: fc.array(fc.string({ maxLength: 12 }), { maxLength: 3 }),
    workersMin: weirdNumber,
    workersMax: weirdNumber,
    env: fc.jsonValue({ maxDepth: 1 }),
    ports: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
  },
  { requiredKeys: [] },
);

/** Past the 10 MB /run limit. */
const OVERSIZED = JSON.stringify({ input: { blob: 'x'.repeat(10_100_000) } });

const body = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: jobLike.map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: workerLike.map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: managementLike.map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"input": ',
      '{"__proto__": {"x": 1}, "input": {}}',
      '{"constructor": {"prototype": {}}}',
      'null',
      '[]',
      '"text"',
      '\u0000\u0001',
      'input=1&x=2',
      ' ',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
  { weight: 1, arbitrary: fc.constant(OVERSIZED) },
);

/** Webhook URLs that would leave 127.0.0.1 are pointed at a closed local port. */
function keepLocal(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  if (typeof value !== 'object' || value === null) return text;
  const record = value as Record<string, unknown>;
  let changed = false;
  for (const key of ['webhook', 'webhookV2']) {
    const url = record[key];
    if (typeof url !== 'string') continue;
    try {
      const parsed = new URL(url);
      if ((parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '127.0.0.1') {
        record[key] = CLOSED_LOCAL_URL;
        changed = true;
      }
    } catch {
      // Not a URL: the harness must refuse it.
    }
  }
  return changed ? JSON.stringify(record) : text;
}

function requestFor(spec: RouteSpec, known: { jobIds: string[] }) {
  return fc
    .record({
      method: fc.oneof({ weight: 4, arbitrary: fc.constant(spec.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
      endpointId: fc.oneof({ weight: 3, arbitrary: fc.constant('ep') }, { weight: 1, arbitrary: segment }),
      jobId: fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...known.jobIds) }, { weight: 1, arbitrary: segment }),
      workerId: fc.oneof(fc.constantFrom('fuzz-worker', 'w1'), segment),
      id: segment,
      rest: fc.oneof(
        fc.constantFrom('chat/completions', 'completions', 'models', 'embeddings', '../x', 'a/../../b'),
        fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/')),
      ),
      query,
      trailingSlash: fc.boolean(),
      headers,
      body,
    })
    .map((r): FuzzRequest => {
      const path = fillPath(spec, r) + (r.trailingSlash ? '/' : '') + r.query;
      const sent: Record<string, string> = {};
      for (const [name, value] of Object.entries(r.headers)) if (value !== undefined) sent[name] = value;
      const payload = r.method === 'GET' || r.method === 'HEAD' ? undefined : keepLocal(r.body);
      if (payload !== undefined) sent['content-length'] = String(Buffer.byteLength(payload));
      return { method: r.method, path, headers: sent, body: payload };
    });
}

// ---------------------------------------------------------------- the checks

const KNOWN_CODES = new Set([...Object.keys(ERROR_CODES), ...Object.keys(PLATFORM_ERROR_CODES)]);
const tally = { requests: 0, byClass: {} as Record<string, number>, codes: {} as Record<string, number> };

function check(fuzz: FuzzRequest, answer: RawAnswer): void {
  const what = `${fuzz.method} ${fuzz.path.slice(0, 200)} (${fuzz.headers['content-type'] ?? 'no content-type'}, body ${fuzz.body?.slice(0, 120) ?? 'none'}) -> ${answer.status} ${answer.text.slice(0, 300)}`;
  tally.requests++;
  const statusClass = `${Math.floor(answer.status / 100)}xx`;
  tally.byClass[statusClass] = (tally.byClass[statusClass] ?? 0) + 1;
  expect(answer.status, what).toBeLessThan(500);
  if (answer.status < 400 || fuzz.method === 'HEAD') return;
  expect(answer.contentType, what).toContain('application/json');
  const parsed = JSON.parse(answer.text) as { error?: { code?: unknown } };
  const code = parsed.error?.code;
  expect(typeof code === 'string' && KNOWN_CODES.has(code), what).toBe(true);
  tally.codes[code as string] = (tally.codes[code as string] ?? 0) + 1;
}

// ---------------------------------------------------------------- the server

let running: ReliabilityServer;
let worker: LocalWorker;
const client = new TestClient();
const known: { jobIds: string[] } = { jobIds: [] };

beforeAll(async () => {
  running = await startReliabilityServer({
    harness: new Harness({ autoCreateEndpoints: false, endpoints: ['ep'] }),
    // Long polls and worker silence short: a fuzzed job-take holds 50 ms, and a job it took is back in the queue soon.
    workerApi: { longPollMs: 50, liveness: { pingIntervalMs: 100, missedPings: 2 } },
    webhook: { retryDelayMs: 10, timeoutMs: 1_000 },
    openaiTimeoutMs: 15_000,
    streamWaitMs: 200,
  });
  const silent = pino({ level: 'silent' });
  const config = resolveOptions({ endpointId: 'ep', concurrency: 16, gpuSampling: false, logger: silent });
  worker = startLocalWorker(
    async (job) => {
      if ((job.input as { fail?: unknown }).fail === true) throw new Error('asked to fail');
      return { echo: job.input };
    },
    config,
    silent,
    running.harness,
  );
  const queue = new QueueCaller(client, `${running.origin}/v2/ep`);
  for (const input of [{ a: 1 }, { fail: true }, { b: 'two' }]) {
    const id = await queue.run({ input });
    await queue.ended(id);
    known.jobIds.push(id);
  }
});

afterAll(async () => {
  await worker?.stop();
  await running?.close();
  await client.close();
  printFigures('fuzz', { seed: SEED, routes: HARNESS_ROUTES.length, requests: tally.requests, byClass: tally.byClass, codes: tally.codes });
});

describe('fuzz of every harness route: no 5xx, every error JSON with a stable code', () => {
  it('the route list covers every route the server registers', () => {
    expect(registeredRouteCount(running.server.app)).toBe(HARNESS_ROUTES.length + STREAMING_ROUTES.length);
  });

  it.each(HARNESS_ROUTES.map((spec) => [`${spec.method} ${spec.path}`, spec] as const))(
    '%s',
    { timeout: ROUTE_TIME_LIMIT_MS + 20_000 },
    async (_name, spec) => {
      await fc.assert(
        fc.asyncProperty(requestFor(spec, known), async (fuzz) => {
          check(fuzz, await send(running.origin, fuzz));
        }),
        { numRuns: RUNS_PER_ROUTE, seed: SEED, interruptAfterTimeLimit: ROUTE_TIME_LIMIT_MS },
      );
    },
  );

  it('random paths and methods', { timeout: ROUTE_TIME_LIMIT_MS + 20_000 }, async () => {
    const anyPath = fc.record({
      method: fc.constantFrom(...METHODS),
      parts: fc.array(segment, { maxLength: 6 }),
      query,
      headers,
      body,
    });
    await fc.assert(
      fc.asyncProperty(anyPath, async (r) => {
        const sent: Record<string, string> = {};
        for (const [name, value] of Object.entries(r.headers)) if (value !== undefined) sent[name] = value;
        const payload = r.method === 'GET' || r.method === 'HEAD' ? undefined : keepLocal(r.body);
        if (payload !== undefined) sent['content-length'] = String(Buffer.byteLength(payload));
        const fuzz = { method: r.method, path: `/${r.parts.join('/')}${r.query}`, headers: sent, body: payload };
        check(fuzz, await send(running.origin, fuzz));
      }),
      { numRuns: 150, seed: SEED, interruptAfterTimeLimit: ROUTE_TIME_LIMIT_MS },
    );
  });

  it('requests the HTTP parser refuses are answered 400 with a stable code too', { timeout: 30_000 }, async () => {
    const port = Number(new URL(running.origin).port);
    const raw = (bytes: Buffer): Promise<string> =>
      new Promise((resolve) => {
        const socket = connect(port, '127.0.0.1');
        const parts: Buffer[] = [];
        socket.on('data', (part: Buffer) => parts.push(part));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(Buffer.concat(parts).toString('latin1')));
        socket.setTimeout(10_000, () => socket.destroy());
        socket.end(bytes);
      });
    const malformed: Array<[string, Buffer]> = [
      ['a latin-1 byte in the path', Buffer.from('GET /v2/ep/status/\u00e9t\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1')],
      ['a control byte in the path', Buffer.from('GET /v2/ep/health\u0001 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1')],
      ['headers past the size limit', Buffer.from(`GET /v2/ep/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 'latin1')],
      ['a header name with a space', Buffer.from('GET /v2/ep/health HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n', 'latin1')],
      ['a content-length that is not a number', Buffer.from('POST /v2/ep/run HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n{}', 'latin1')],
      ['broken chunked encoding', Buffer.from('POST /v2/ep/run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', 'latin1')],
      ['no request line at all', Buffer.from('\u0016\u0003\u0001\u0002\u0000\u0001\u0000\r\n\r\n', 'latin1')],
    ];
    for (const [what, bytes] of malformed) {
      const answer = await raw(bytes);
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head, what).toMatch(/^HTTP\/1\.1 400 /);
      expect(head.toLowerCase(), what).toContain('content-type: application/json');
      expect((JSON.parse(body) as { error: { code: string } }).error.code, what).toBe('SW_INVALID_REQUEST');
      tally.requests++;
      tally.codes.SW_INVALID_REQUEST = (tally.codes.SW_INVALID_REQUEST ?? 0) + 1;
    }
  });

  it('the server still serves after the fuzz', async () => {
    const health = await client.call('GET', `${running.origin}/v2/ep/health`);
    expect(health.status).toBe(200);
    const queue = new QueueCaller(client, `${running.origin}/v2/ep`);
    const view = await queue.ended(await queue.run({ input: { after: 'fuzz' } }));
    expect(view).toMatchObject({ status: 'COMPLETED', output: { echo: { after: 'fuzz' } } });
  });
});
