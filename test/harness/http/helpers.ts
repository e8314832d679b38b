/**
 * @module test/harness/http/helpers
 * A harness server on 127.0.0.1 port 0, an in-process worker for it, a small HTTP
 * client, a webhook receiver, and a bounded wait. Everything talks to loopback only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Harness, type HarnessOptions } from '../../../src/harness/index.js';
import { createHarnessServer, type HarnessServer, type HarnessServerOptions } from '../../../src/harness/http/index.js';
import { startLocalWorker, type LocalWorker } from '../../../src/local/local-worker.js';
import { createMetrics } from '../../../src/metrics/index.js';
import { resolveOptions, type Handler, type ServeOptions } from '../../../src/worker/index.js';

export const silent = pino({ level: 'silent' });

export interface TestServer {
  readonly harness: Harness;
  readonly server: HarnessServer;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `http://127.0.0.1:<port>/v2/<endpoint>` */
  endpointUrl(endpointId?: string): string;
  close(): Promise<void>;
}

/** A harness and its server on port 0; rate limits off unless given (tests of other things must not trip them). */
export async function startTestServer(
  options: Partial<Omit<HarnessServerOptions, 'harness'>> = {},
  harnessOptions: HarnessOptions = {},
): Promise<TestServer> {
  const harness = new Harness(harnessOptions);
  const server = await createHarnessServer({
    rateLimits: false,
    metrics: createMetrics({ defaultMetrics: false }),
    ...options,
    harness,
    host: '127.0.0.1',
    port: 0,
  });
  return {
    harness,
    server,
    url: server.url,
    endpointUrl: (endpointId = 'ep') => `${server.url}/v2/${endpointId}`,
    close: async () => {
      await server.close();
      harness.close();
    },
  };
}

/** An in-process worker on `endpointId` of `harness`. */
export function startTestWorker(
  harness: Harness,
  handler: Handler<never>,
  options: ServeOptions = {},
): LocalWorker & { stop(): Promise<void> } {
  const config = resolveOptions({ endpointId: 'ep', shutdownTimeoutMs: 1_000, timeoutGraceMs: 500, ...options, logger: silent });
  const local = startLocalWorker(handler as Handler<unknown>, config, silent, harness);
  return Object.assign(local, { stop: async () => void (await local.runtime.stop()) });
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
}

/** One request; `body` objects are sent as JSON, strings and buffers as they are. */
export async function call(
  method: string,
  url: string,
  options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<HttpAnswer> {
  const { body } = options;
  const raw = body === undefined ? undefined : typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  const response = await fetch(url, {
    method,
    ...(raw !== undefined ? { body: raw } : {}),
    headers: { ...(raw !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** The `error.code` of an error answer. */
/** POST /run to an endpoint URL and answer the new job's id. */
/** `method url` (a JSON body when given) whose answer must be 2xx: its body parsed; otherwise throws with the status and body. */
export async function fetchOkJson<T>(url: string, method = 'GET', body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

export async function submit(url: string, body: unknown = { input: {} }): Promise<string> {
  return ((await call('POST', `${url}/run`, { body })).json as { id: string }).id;
}

export function errorCode(answer: HttpAnswer): unknown {
  return (answer.json as { error?: { code?: unknown } } | undefined)?.error?.code;
}

/** Poll `check` until it answers true; at most `tries` times, `everyMs` apart (bounded, no timing threshold asserted). */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, tries = 500, everyMs = 10): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`gave up waiting for ${what}`);
}

export interface ReceivedHook {
  readonly body: unknown;
  readonly headers: IncomingMessage['headers'];
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedHook[];
  close(): Promise<void>;
}

/** A local webhook receiver answering the nth request with `answer(n)` (a status code, or 'hang'). */
export async function startReceiver(answer: (attempt: number) => number | 'hang'): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      received.push({ body: JSON.parse(text) as unknown, headers: request.headers });
      const reply = answer(received.length);
      if (reply === 'hang') {
        hanging.push(response);
        return;
      }
      response.writeHead(reply, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
