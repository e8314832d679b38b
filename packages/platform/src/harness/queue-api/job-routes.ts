/**
 * @module harness/queue-api/job-routes
 * The routes about one job: GET /status/{id} (with ?ttl=), GET /status-sync/{id}
 * (?wait=), GET /stream/{id} (chunks since the previous call; long-polls up to ?wait=
 * when none are unread, so clients that poll in a loop do not spin), POST
 * /cancel/{id} and POST /retry/{id}.
 */
import type { FastifyInstance } from 'fastify';
import { isTerminal } from 'serverless-worker/internal';
import { requestSignal } from '../http/client-signal.js';
import { JobWatch } from '../http/job-watch.js';
import { operationConfig } from '../http/route-config.js';
import { registerRoute } from '../http/route-spec.js';
import { jobOf, type QueueApiContext } from './context.js';
import { StatusQuerySchema, WaitQuerySchema, parseRequestPart, streamQuerySchema } from './params.js';
import { lacksQueryKey, plainWait } from './plain-shapes.js';
import { QUEUE_ROUTES } from './queue-routes.js';

export function registerJobRoutes(app: FastifyInstance, context: QueueApiContext): void {
  const StreamQuerySchema = streamQuerySchema(context.streamWaitMs);

  registerRoute(app, QUEUE_ROUTES.status, { config: operationConfig('status') }, async (request) => {
    const { endpoint, jobId } = await jobOf(context, request.params);
    const ttl = lacksQueryKey(request.query, 'ttl') ? undefined : parseRequestPart(StatusQuerySchema, request.query, 'query string').ttl;
    return ttl === undefined ? endpoint.status(jobId) : endpoint.setTtl(jobId, ttl);
  });

  registerRoute(app, QUEUE_ROUTES.statusSync, { config: operationConfig('status') }, async (request, reply) => {
    const { endpoint, jobId } = await jobOf(context, request.params);
    const wait = plainWait(request.query) ?? parseRequestPart(WaitQuerySchema, request.query, 'query string').wait;
    const waiting = requestSignal(reply, context.closing);
    try {
      return await endpoint.waitForEnd(jobId, wait, waiting.signal);
    } finally {
      waiting.dispose();
    }
  });

  registerRoute(app, QUEUE_ROUTES.stream, { config: operationConfig('stream') }, async (request, reply) => {
    const { endpoint, jobId } = await jobOf(context, request.params);
    const { wait } = parseRequestPart(StreamQuerySchema, request.query, 'query string');
    const watch = new JobWatch(endpoint, jobId);
    const waiting = requestSignal(reply, context.closing);
    try {
      let read = await endpoint.readStream(jobId);
      if (read.stream.length === 0 && !isTerminal(read.status) && wait > 0) {
        await watch.next(wait, context.harness.clock, waiting.signal);
        read = await endpoint.readStream(jobId);
      }
      // attempt and retries tell a reader that the job restarted (restarted streams, README "Streams").
      return { status: read.status, stream: read.stream, attempt: read.attempt, ...(read.retries > 0 ? { retries: read.retries } : {}) };
    } finally {
      waiting.dispose();
      watch.close();
    }
  });

  registerRoute(app, QUEUE_ROUTES.cancel, { config: operationConfig('cancel') }, async (request) => {
    const { endpoint, jobId } = await jobOf(context, request.params);
    const view = await endpoint.cancel(jobId);
    return { id: view.id, status: view.status };
  });

  registerRoute(app, QUEUE_ROUTES.retry, async (request) => {
    const { endpoint, jobId } = await jobOf(context, request.params);
    const view = await endpoint.retry(jobId);
    // As for /run: back in the queue, whether or not a waiting worker took it at once.
    return { id: view.id, status: 'IN_QUEUE' as const };
  });
}
