/**
 * @module harness/queue-api
 * The queue API of spec 4.2 as a fastify plugin, registered under `/v2`:
 * run, runsync, status, status-sync, stream, cancel, retry, purge-queue, health,
 * requests. Its scope reads every body as JSON (see json-body.ts).
 * Layer: harness feature (docs/architecture.md): owns its routes; uses http/, the core, the store, load-balancing/.
 */
import type { FastifyInstance } from 'fastify';
import { useLenientJsonBodies } from '../http/json-body.js';
import type { QueueApiContext } from './context.js';
import { registerEndpointRoutes } from './endpoint-routes.js';
import { registerJobRoutes } from './job-routes.js';
import { registerRequestsRoute } from './requests-route.js';
import { registerSubmitRoutes } from './submit-routes.js';

export type { QueueApiContext } from './context.js';
export { summarizeJob, type RequestSummary, type RequestsListing } from './requests-route.js';

/** Register the queue API routes; mount with `prefix: '/v2'`. */
export async function queueApiRoutes(app: FastifyInstance, context: QueueApiContext): Promise<void> {
  useLenientJsonBodies(app, { rawInput: true });
  registerSubmitRoutes(app, context);
  registerJobRoutes(app, context);
  registerEndpointRoutes(app, context);
  registerRequestsRoute(app, context);
}
