/**
 * @module harness/load-balancing/lb-proxy
 * One request through to a load-balancing worker, untouched: the method, the path
 * after `/lb/{endpoint_id}`, the query, the headers (less hop-by-hop ones and the
 * caller's Authorization, which is the platform's key, not the worker's) and the body
 * stream go to the worker; its status, headers and body stream (SSE included) come
 * back as they arrive. No retry on another worker, as on the platform. Past
 * `requestTimeoutMs`: 524 when nothing was answered yet, else the stream is cut.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { ServerlessWorkerError } from '../../job/index.js';
import type { LbPool, LbWorker } from './lb-pool.js';
import type { LoadBalancing } from './load-balancing.js';

/** Headers that belong to one connection, never forwarded (RFC 9110 7.6.1), plus host and the caller's key. */
const REQUEST_DROP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'authorization']);
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

export interface ProxyTarget {
  readonly lb: LoadBalancing;
  readonly pool: LbPool;
  readonly worker: LbWorker;
  /** Path and query as the worker sees them (`/v1/chat/completions?x=1`). */
  readonly path: string;
}

/** Forward `request` to the worker and its answer back; resolves once the exchange ended. */
export function proxyRequest(request: IncomingMessage, response: ServerResponse, target: ProxyTarget): Promise<void> {
  const { lb, pool, worker, path } = target;
  const url = new URL(path, worker.url);
  const headers = copyHeaders(request.headers, REQUEST_DROP);
  const forwardedFor = [request.headers['x-forwarded-for'], request.socket.remoteAddress].filter((part) => part !== undefined).join(', ');
  headers['x-forwarded-for'] = forwardedFor;
  if (request.headers.host !== undefined) headers['x-forwarded-host'] = request.headers.host;
  headers['x-forwarded-proto'] = 'http';
  worker.inFlight++;
  worker.requests++;
  return new Promise<void>((resolve) => {
    let done = false;
    let timedOut = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      worker.inFlight--;
      resolve();
    };
    const upstream = httpRequest(url, { method: request.method, headers, agent: lb.agent });
    const timer = setTimeout(() => {
      timedOut = true;
      sendRawError(
        response,
        new ServerlessWorkerError('SW_LB_REQUEST_TIMEOUT', `The request to endpoint ${pool.endpointId} ran past the request time limit of ${lb.settings.requestTimeoutMs} ms`, {
          endpointId: pool.endpointId,
          workerId: worker.id,
          requestTimeoutMs: lb.settings.requestTimeoutMs,
        }),
      );
      upstream.destroy();
      finish();
    }, lb.settings.requestTimeoutMs);
    upstream.on('response', (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, copyHeaders(answer.headers, RESPONSE_DROP));
      // Headers now, not with the first body bytes: an SSE client sees the stream open.
      response.flushHeaders();
      answer.pipe(response);
      answer.on('error', () => response.destroy());
      answer.on('end', finish);
    });
    upstream.on('error', (error) => {
      if (timedOut || done) return;
      const reason = `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}`.trim();
      lb.markUnreachable(pool, worker, `request failed: ${reason}`);
      sendRawError(
        response,
        new ServerlessWorkerError('SW_WORKER_UNREACHABLE', `Load-balancing worker ${worker.id} of endpoint ${pool.endpointId} could not be reached or dropped the request: ${reason}`, {
          endpointId: pool.endpointId,
          workerId: worker.id,
        }),
      );
      finish();
    });
    // The caller went away: stop the worker's side too (an SSE generator sees its socket close).
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
      finish();
    });
    request.pipe(upstream);
  });
}
