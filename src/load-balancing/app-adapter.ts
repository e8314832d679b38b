/**
 * @module load-balancing/app-adapter
 * The author's HTTP app as one node:http request listener. Accepted: a plain
 * `(req, res)` listener (node:http, express, connect); a fastify instance (its
 * `routing` after `ready()`); any object with `fetch(Request) => Response` (hono, and
 * other fetch-style apps), bridged with Node's Web streams so that a streamed Response
 * (SSE) goes out as it is produced.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { ServerlessWorkerError } from '../job/index.js';

/** A fetch-style app (hono's `app`, or `{ fetch }`). */
export interface FetchApp {
  fetch(request: Request): Response | Promise<Response>;
}

/** A fastify instance, as far as it is used here. */
export interface FastifyLikeApp {
  ready(): PromiseLike<unknown>;
  routing(request: IncomingMessage, response: ServerResponse): void;
}

/** What `serveLoadBalancing`'s `app` may answer. */
export type HttpApp = RequestListener | FetchApp | FastifyLikeApp;

function isFastify(app: object): app is FastifyLikeApp {
  return typeof (app as Partial<FastifyLikeApp>).routing === 'function' && typeof (app as Partial<FastifyLikeApp>).ready === 'function';
}

function isFetchApp(app: object): app is FetchApp {
  return typeof (app as Partial<FetchApp>).fetch === 'function';
}

/** A Web Request for `request` (the body streamed, not buffered). */
function toWebRequest(request: IncomingMessage, signal: AbortSignal): Request {
  const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  const init: RequestInit & { duplex?: 'half' } = { method: request.method ?? 'GET', headers, signal };
  if (hasBody) {
    init.body = Readable.toWeb(request) as ReadableStream<Uint8Array>;
    init.duplex = 'half';
  }
  return new Request(url, init);
}

function fetchListener(app: FetchApp): RequestListener {
  return (request, response) => {
    const controller = new AbortController();
    response.on('close', () => controller.abort());
    void (async () => {
      const answer = await app.fetch(toWebRequest(request, controller.signal));
      const headers: Record<string, string | string[]> = {};
      answer.headers.forEach((value, name) => {
        if (name !== 'set-cookie') headers[name] = value;
      });
      const cookies = answer.headers.getSetCookie();
      if (cookies.length > 0) headers['set-cookie'] = cookies;
      response.writeHead(answer.status, answer.statusText, headers);
      if (answer.body === null) {
        response.end();
        return;
      }
      response.flushHeaders();
      Readable.fromWeb(answer.body as import('node:stream/web').ReadableStream<Uint8Array>)
        .on('error', () => response.destroy())
        .pipe(response);
    })().catch((error: unknown) => {
      if (!response.headersSent) {
        response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        response.end(JSON.stringify({ error: { code: 'SW_HANDLER_ERROR', message: error instanceof Error ? error.message : String(error) } }));
      } else response.destroy();
    });
  };
}

/**
 * One request listener for `app`.
 * @throws ServerlessWorkerError SW_INVALID_OPTIONS when `app` is none of the accepted kinds.
 */
export async function toRequestListener(app: unknown): Promise<RequestListener> {
  if (typeof app === 'function') return app as RequestListener;
  if (typeof app === 'object' && app !== null) {
    if (isFastify(app)) {
      await app.ready();
      return (request, response) => app.routing(request, response);
    }
    if (isFetchApp(app)) return fetchListener(app);
  }
  throw new ServerlessWorkerError(
    'SW_INVALID_OPTIONS',
    `serveLoadBalancing: app(state) must answer a (req, res) request listener, a fastify instance or an object with fetch(request); got ${app === null ? 'null' : typeof app}`,
  );
}
