/**
 * @module harness/http/queue-api/endpoint-routes
 * The routes about the endpoint as a whole: POST /purge-queue and GET /health.
 */
import type { FastifyInstance } from 'fastify';
import { operationConfig } from '../route-config.js';
import { endpointOf, type QueueApiContext } from './context.js';

export function registerEndpointRoutes(app: FastifyInstance, context: QueueApiContext): void {
  app.post('/:endpointId/purge-queue', { config: operationConfig('purge-queue') }, async (request) => {
    const removed = endpointOf(context, request.params).purgeQueue();
    return { removed, status: 'completed' as const };
  });

  app.get('/:endpointId/health', async (request) => endpointOf(context, request.params).health());
}
