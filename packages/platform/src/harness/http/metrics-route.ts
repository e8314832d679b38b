/**
 * @module harness/http/metrics-route
 * GET /metrics: the Prometheus text of the server's registry.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from 'serverless-worker/internal';
import { defineRoute, registerRoute } from './route-spec.js';

export const METRICS_ROUTE = defineRoute({
  prefix: '',
  tag: 'server',
  method: 'GET',
  path: '/metrics',
  operationId: 'metrics',
  summary: "The server's metrics as Prometheus text.",
  replyDescription: 'Prometheus text exposition.',
});

export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics): void {
  registerRoute(app, METRICS_ROUTE, async (_request, reply) => {
    const text = await metrics.text();
    return reply.type(metrics.contentType).send(text);
  });
}
