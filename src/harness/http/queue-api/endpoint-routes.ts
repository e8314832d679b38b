/**
 * @module harness/http/queue-api/endpoint-routes
 * The routes about the endpoint as a whole: POST /purge-queue and GET /health
 * (`jobs` and `workers` of spec 4.2; `workers` also carries initializing, ready and
 * throttled, which one official client's type lists).
 */
import type { FastifyInstance } from 'fastify';
import { loadBalancingOf } from '../../load-balancing/index.js';
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
    const pool = loadBalancingOf(context.harness)?.pool(endpoint.id);
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
}
