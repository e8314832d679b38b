/**
 * @module harness/load-balancing/lb-proxy
 * One request through to a load-balancing worker, untouched: the method, the path
 * after `/lb/{endpoint_id}`, the query, the headers (less hop-by-hop ones and the
 * caller's Authorization, which is the platform's key, not the worker's) and the body
 * stream go to the worker; its status, headers and body stream (SSE included) come
 * back as they arrive. No retry on another worker, as on the platform. Past
 * `requestTimeoutMs`: 524 when nothing was answered yet, else the stream is cut.
 *
 * The upstream is always the worker's own origin: the caller's path is sent as the
 * request target, never resolved as a URL, so `//other-host/x` or `/../x` stay paths on
 * that worker. Only a failure to connect takes the worker out of the pool; a request the
 * worker dropped (or one Node refused to send) answers 502 and leaves the worker to its
 * /ping.
 */
import type { IncomingHttpHeaders, IncomingMessage, RequestOptions, ServerResponse } from 'node:http';
import { ServerlessWorkerError, targetRefusal, type TimerHandle } from 'serverless-worker/internal';
import type { LbPool, LbWorker } from './lb-pool.js';
import type { LoadBalancing } from './load-balancing.js';
const { request: httpRequest } = process.getBuiltinModule('node:http');
const { request: httpsRequest } = process.getBuiltinModule('node:https');

/** Headers that belong to one connection, never forwarded (RFC 9110 7.6.1), plus host and the caller's key. */
const REQUEST_DROP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
]);
const RESPONSE_DROP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function copyHeaders(headers: IncomingHttpHeaders, drop: ReadonlySet<string>): Record<string, string | string[]> {
  const listed = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== ''),
  );
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || drop.has(name) || listed.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** Answer a JSON error on a raw response (the route hijacked the reply). */
export function sendRawError(response: ServerResponse, error: ServerlessWorkerError): void {
  if (response.headersSent || response.destroyed) {
    response.destroy();
    return;
  }
  const body = JSON.stringify(error.toJSON());
  response.writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/** Errors of a connection that could not be made at all: the worker is down or unreachable, not the request at fault. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL']);

/** Whether `error` says the worker could not be reached (rather than that this one request failed). */
export function isConnectFailure(error: unknown): boolean {
  return CONNECT_FAILURES.has(String((error as NodeJS.ErrnoException | null)?.code ?? ''));
}

/**
 * Where to send a request for `pathAndQuery` on the worker at `workerUrl`: the worker's
 * origin (scheme, host, port) and the path and query exactly as the caller sent them.
 * @throws ServerlessWorkerError SW_INVALID_REQUEST when the path does not start with "/".
 */
export function upstreamTarget(workerUrl: string, pathAndQuery: string): { readonly secure: boolean; readonly options: RequestOptions } {
  if (!pathAndQuery.startsWith('/')) {
    throw new ServerlessWorkerError('SW_INVALID_REQUEST', `The path to forward must start with "/"; got ${JSON.stringify(pathAndQuery.slice(0, 100))}`);
  }
  const origin = new URL(workerUrl);
  return {
    secure: origin.protocol === 'https:',
    // hostname without IPv6 brackets, as node:http wants it.
    options: { hostname: origin.hostname.replace(/^\[(.*)\]$/, '$1'), port: origin.port || (origin.protocol === 'https:' ? 443 : 80), path: pathAndQuery },
  };
}

export interface ProxyTarget {
  readonly lb: LoadBalancing;
  readonly pool: LbPool;
  readonly worker: LbWorker;
  /** Path and query as the worker sees them (`/v1/chat/completions?x=1`). */
  readonly path: string;
}

/** Forward `request` to the worker and its answer back; resolves once the exchange ended. */
export function proxyRequest(request: IncomingMessage, response: ServerResponse, target: ProxyTarget): Promise<void> {
  return new ProxiedExchange(request, response, target).run();
}

/** The headers the worker gets: the caller's, less hop-by-hop ones and its key, plus X-Forwarded-*. */
function upstreamHeaders(request: IncomingMessage): Record<string, string | string[]> {
  const headers = copyHeaders(request.headers, REQUEST_DROP);
  headers['x-forwarded-for'] = [request.headers['x-forwarded-for'], request.socket.remoteAddress].filter((part) => part !== undefined).join(', ');
  if (request.headers.host !== undefined) headers['x-forwarded-host'] = request.headers.host;
  headers['x-forwarded-proto'] = 'http';
  return headers;
}

/** One request through to a worker and back: its timer, the worker's in-flight count, and how it ends. */
class ProxiedExchange {
  readonly #request: IncomingMessage;
  readonly #response: ServerResponse;
  readonly #target: ProxyTarget;
  #resolve: () => void = () => {};
  #done = false;
  #timedOut = false;
  #timer: TimerHandle | undefined;
  #upstream: ReturnType<typeof httpRequest> | undefined;

  constructor(request: IncomingMessage, response: ServerResponse, target: ProxyTarget) {
    this.#request = request;
    this.#response = response;
    this.#target = target;
  }

  run(): Promise<void> {
    const { lb, worker, path } = this.#target;
    const upstreamAt = upstreamTarget(worker.url, path);
    const headers = upstreamHeaders(this.#request);
    worker.inFlight++;
    worker.requests++;
    return new Promise<void>((resolve) => {
      this.#resolve = resolve;
      const options: RequestOptions = {
        ...upstreamAt.options,
        method: this.#request.method,
        headers,
        agent: upstreamAt.secure ? lb.httpsAgent : lb.agent,
        // A worker URL with a name is checked again on what the name resolves to at connect time.
        lookup: lb.policy.lookupFor(Number(upstreamAt.options.port)),
      };
      let upstream: ReturnType<typeof httpRequest>;
      try {
        upstream = upstreamAt.secure ? httpsRequest(options) : httpRequest(options);
      } catch (error) {
        // Node refused to send it (a path or header it cannot write): the request's fault, not the worker's.
        const message = `The request could not be forwarded to a load-balancing worker: ${(error as Error).message}`;
        this.#fail(new ServerlessWorkerError('SW_INVALID_REQUEST', message, { endpointId: this.#target.pool.endpointId }));
        return;
      }
      this.#upstream = upstream;
      this.#timer = lb.clock.setTimer(lb.settings.requestTimeoutMs, () => this.#onTimeout(), { keepAlive: true });
      upstream.on('response', (answer) => this.#onResponse(answer));
      upstream.on('error', (error) => this.#onError(error));
      // The caller went away: stop the worker's side too (an SSE generator sees its socket close).
      this.#response.on('close', () => {
        if (!this.#response.writableFinished) upstream.destroy();
        this.#finish();
      });
      this.#request.pipe(upstream);
    });
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#timer?.cancel();
    this.#target.worker.inFlight--;
    this.#resolve();
  }

  #fail(error: ServerlessWorkerError): void {
    sendRawError(this.#response, error);
    this.#finish();
  }

  #onResponse(answer: IncomingMessage): void {
    const response = this.#response;
    response.writeHead(answer.statusCode ?? 502, answer.statusMessage, copyHeaders(answer.headers, RESPONSE_DROP));
    // Headers now, not with the first body bytes: an SSE client sees the stream open.
    response.flushHeaders();
    answer.pipe(response);
    answer.on('error', () => response.destroy());
    answer.on('end', () => this.#finish());
  }

  #onTimeout(): void {
    const { lb, pool, worker } = this.#target;
    const { requestTimeoutMs } = lb.settings;
    this.#timedOut = true;
    sendRawError(
      this.#response,
      new ServerlessWorkerError(
        'SW_LB_REQUEST_TIMEOUT',
        `The request to endpoint ${pool.endpointId} ran past the request time limit of ${requestTimeoutMs} ms`,
        {
          endpointId: pool.endpointId,
          workerId: worker.id,
          requestTimeoutMs,
        },
      ),
    );
    this.#upstream?.destroy();
    this.#finish();
  }

  #onError(error: Error): void {
    if (this.#timedOut || this.#done) return;
    const { lb, pool, worker } = this.#target;
    const details = { endpointId: pool.endpointId, workerId: worker.id };
    const refusal = targetRefusal(error);
    if (refusal) {
      lb.markUnreachable(pool, worker, `request refused: ${refusal.reason}`);
      this.#fail(
        new ServerlessWorkerError('SW_TARGET_REFUSED', `Load-balancing worker ${worker.id} of endpoint ${pool.endpointId} ${refusal.message}`, details),
      );
      return;
    }
    const reason = `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}`.trim();
    if (isConnectFailure(error)) lb.markUnreachable(pool, worker, `request failed: ${reason}`);
    this.#fail(
      new ServerlessWorkerError(
        'SW_WORKER_UNREACHABLE',
        `Load-balancing worker ${worker.id} of endpoint ${pool.endpointId} could not be reached or dropped the request: ${reason}`,
        details,
      ),
    );
  }
}
