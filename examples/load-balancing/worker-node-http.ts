/**
 * The same kind of worker with a plain node:http request listener instead of fastify:
 * `GET /whoami` answers the worker id, `GET /hold` streams an event and holds the stream until `POST /release`, `POST /echo` sends the body back as it came,
 * `GET /slow?ms=` sends its headers at once and its body after a pause (`&late=1`: all after the pause), to see graceful shutdown and time limits. Used by the tests.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveLoadBalancing, type InitContext } from 'serverless-worker';

const workerId = process.env.RUNPOD_POD_ID ?? 'node-http';

/** Streams held open by GET /hold, released by POST /release. */
const held = new Set<ServerResponse>();

function listener(request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? '/', 'http://worker');
  if (url.pathname === '/hold') {
    // Server-sent events: one at once, the last only when POST /release comes.
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write('data: first\n\n');
    held.add(response);
    response.on('close', () => held.delete(response));
  } else if (url.pathname === '/release' && request.method === 'POST') {
    for (const stream of held) stream.end('data: released\n\n');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ released: held.size }));
    held.clear();
  } else if (url.pathname === '/whoami') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ workerId }));
  } else if (url.pathname === '/echo' && request.method === 'POST') {
    response.writeHead(200, {
      'content-type': request.headers['content-type'] ?? 'application/octet-stream',
      'x-seen-authorization': String(request.headers.authorization ?? ''),
    });
    request.pipe(response);
  } else if (url.pathname === '/slow') {
    // Headers at once (a caller knows the request arrived), the body after the pause;
    // with ?late=1 nothing at all until the pause is over.
    const ms = Number(url.searchParams.get('ms') ?? '0');
    if (url.searchParams.get('late') !== '1') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.flushHeaders();
    }
    setTimeout(() => {
      if (!response.headersSent) response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ workerId, slept: ms }));
    }, ms);
  } else {
    response.writeHead(404, { 'content-type': 'application/json' });
    // `path`: the request target as it arrived, for the tests of what the harness forwards.
    response.end(JSON.stringify({ error: `no route ${request.method} ${url.pathname}`, path: request.url, workerId }));
  }
}

await serveLoadBalancing({
  init: async ({ signal, log }: InitContext) => {
    try {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, Number(process.env.INIT_DELAY_MS ?? '0'));
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
    } catch (error) {
      // Stopped during start-up (SIGTERM): undo what a real init leaves half-done (a partial
      // download, a child server) before giving up; the worker waits timeoutGraceMs for it.
      await new Promise((resolve) => setTimeout(resolve, Number(process.env.INIT_CLEANUP_MS ?? '0')));
      log.info('init stopped: clean-up done');
      throw error;
    }
    if (process.env.INIT_MODE === 'fail') throw new Error('weights not found');
    return { workerId };
  },
  app: () => listener,
  // Knobs for the tests: requests at once the harness sends (announced), exit delay after a failed start-up, drain time, init's time to stop.
  concurrency: Number(process.env.LB_CONCURRENCY ?? '100'),
  failureExitDelayMs: Number(process.env.FAILURE_EXIT_DELAY_MS ?? '10000'),
  shutdownTimeoutMs: Number(process.env.SHUTDOWN_TIMEOUT_MS ?? '30000'),
  timeoutGraceMs: Number(process.env.TIMEOUT_GRACE_MS ?? '5000'),
});
