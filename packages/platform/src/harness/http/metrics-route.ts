/**
 * @module harness/http/metrics-route
 * GET /metrics: the Prometheus text of the server's registry.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from 'serverless-worker/internal';

export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics): void {
  app.get('/metrics', async (_request, reply) => {
    const text = await metrics.text();
    return reply.type(metrics.contentType).send(text);
  });
}
