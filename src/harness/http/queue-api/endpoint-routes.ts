/**
 * @module harness/http/queue-api/endpoint-routes
 * The routes about the endpoint as a whole: POST /purge-queue and GET /health
 * (`jobs` and `workers` of spec 4.2; `workers` also carries initializing, ready and
 * throttled, which one official client's type lists).
 */
import type { FastifyInstance } from 'fastify';
import { operationConfig } from '../route-config.js';
import { endpointOf, type QueueApiContext } from './context.js';

export function registerEndpointRoutes(app: FastifyInstance, context: QueueApiContext): void {
  app.post('/:endpointId/purge-queue', { config: operationConfig('purge-queue') }, async (request) => {
    const removed = endpointOf(context, request.params).purgeQueue();
    return { removed, status: 'completed' as const };
  });

  app.get('/:endpointId/health', async (request) => {
    const endpoint = endpointOf(context, request.params);
    const { jobs, workers } = endpoint.health();
    // The spec's idle and running, plus the fields one official client's type lists:
    // initializing (heard from, no job asked for yet: init runs), ready (can take jobs).
    const initializing = endpoint.workers.initializingCount();
    return { jobs, workers: { ...workers, initializing, ready: workers.idle + workers.running, throttled: 0 } };
  });
}
