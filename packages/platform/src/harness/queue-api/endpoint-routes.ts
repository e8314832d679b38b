/**
 * @module harness/queue-api/endpoint-routes
 * The routes about the endpoint as a whole: POST /purge-queue, GET /health
 * (`jobs` and `workers` of spec 4.2; `workers` also carries initializing, ready and
 * throttled, which one official client's type lists; counted from real processes
 * when the harness launches the workers, with `healthy`), and GET /logs (the output of
 * launched workers).
 */
import type { FastifyInstance } from 'fastify';
import { operationConfig } from '../http/route-config.js';
import { registerRoute } from '../http/route-spec.js';
import { existingEndpointOf, type QueueApiContext } from './context.js';
import { parseRequestPart } from './params.js';
import { LogsQuerySchema, QUEUE_ROUTES } from './queue-routes.js';

/** The jobs of an endpoint no job was ever sent to. */
const NO_JOBS = Object.freeze({ completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 });

export function registerEndpointRoutes(app: FastifyInstance, context: QueueApiContext): void {
  registerRoute(app, QUEUE_ROUTES.purgeQueue, { config: operationConfig('purge-queue') }, async (request) => {
    const { endpoint } = await existingEndpointOf(context, request.params);
    const removed = endpoint ? await endpoint.purgeQueue() : 0;
    return { removed, status: 'completed' as const };
  });

  registerRoute(app, QUEUE_ROUTES.health, async (request) => {
    // A read: an endpoint no job was sent to answers zeros, and is not created.
    const { endpointId, endpoint } = await existingEndpointOf(context, request.params);
    const launched = await context.launchedWorkers?.health(endpointId);
    if (launched) {
      // Workers the harness runs itself: counted from their processes.
      const { healthy, unhealthyReason, stopping: _stopping, ...workers } = launched;
      return {
        jobs: endpoint ? (await endpoint.health()).jobs : NO_JOBS,
        workers: { ...workers, ready: workers.idle + workers.running },
        healthy,
        ...(unhealthyReason !== undefined ? { unhealthyReason } : {}),
      };
    }
    const { jobs, workers } = endpoint ? await endpoint.health() : { jobs: NO_JOBS, workers: { idle: 0, running: 0 } };
    // The spec's idle and running, plus the fields one official client's type lists:
    // initializing (heard from, no job asked for yet: init runs), ready (can take jobs).
    const initializing = endpoint ? await endpoint.workers.initializingCount() : 0;
    const pool = context.loadBalancing?.pool(endpointId);
    if (pool === undefined || pool.size === 0) {
      return { jobs, workers: { ...workers, initializing, ready: workers.idle + workers.running, throttled: 0 } };
    }
    // A load-balancing endpoint: its workers as the harness's /ping checks see them.
    const lb = pool.counts();
    const idle = workers.idle + lb.idle;
    const running = workers.running + lb.running;
    return {
      jobs,
      workers: { idle, running, initializing: initializing + lb.initializing, ready: idle + running, throttled: 0, unhealthy: lb.unhealthy },
      loadBalancing: { workers: pool.all().map((worker) => pool.view(worker)) },
    };
  });

  // The output of the workers the harness launched for this endpoint (harness/launcher).
  registerRoute(app, QUEUE_ROUTES.logs, async (request) => {
    const { endpointId } = await existingEndpointOf(context, request.params);
    const { limit, workerId } = parseRequestPart(LogsQuerySchema, request.query, 'query string');
    return { lines: context.launchedWorkers?.logs(endpointId, limit, workerId) ?? [] };
  });
}
