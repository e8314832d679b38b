/**
 * The same kind of worker with a plain node:http request listener instead of fastify:
 * `GET /whoami` answers the worker id, `POST /echo` sends the body back as it came,
 * `GET /slow?ms=` answers after a pause (to see graceful shutdown). Used by the tests.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveLoadBalancing, type InitContext } from 'serverless-worker';

const workerId = process.env.RUNPOD_POD_ID ?? 'node-http';

function listener(request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? '/', 'http://worker');
  if (url.pathname === '/whoami') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ workerId }));
  } else if (url.pathname === '/echo' && request.method === 'POST') {
    response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/octet-stream', 'x-seen-authorization': String(request.headers.authorization ?? '') });
    request.pipe(response);
  } else if (url.pathname === '/slow') {
    setTimeout(() => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ workerId, slept: Number(url.searchParams.get('ms') ?? '0') }));
    }, Number(url.searchParams.get('ms') ?? '0'));
  } else {
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: `no route ${request.method} ${url.pathname}` }));
  }
}

await serveLoadBalancing({
  init: async ({ signal }: InitContext) => {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, Number(process.env.INIT_DELAY_MS ?? '0'));
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
    if (process.env.INIT_MODE === 'fail') throw new Error('weights not found');
    return { workerId };
  },
  app: () => listener,
  failureExitDelayMs: Number(process.env.FAILURE_EXIT_DELAY_MS ?? '10000'),
  shutdownTimeoutMs: Number(process.env.SHUTDOWN_TIMEOUT_MS ?? '30000'),
});
