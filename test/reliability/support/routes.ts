/**
 * @module test/reliability/support/routes
 * Every route of the harness server (queue API, OpenAI-compatible routes, worker API,
 * management API, /metrics, /openapi.json and /docs, the /ui dashboard) as method and path pattern, and a check that the list is
 * complete: the count of (route, method) pairs fastify has registered, HEAD left out.
 */
import type { FastifyInstance } from 'fastify';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

export interface RouteSpec {
  readonly method: Method;
  /** With `:endpointId`, `:jobId`, `:workerId`, `:id` and `*` placeholders. */
  readonly path: string;
  /** Served without the API key: the dashboard's page and modules, /docs and its files, which hold no data. */
  readonly public?: true;
}

const v2 = (method: Method, rest: string): RouteSpec => ({ method, path: `/v2/:endpointId/${rest}` });

const management = (collection: string): RouteSpec[] => [
  { method: 'POST', path: `/v1/${collection}` },
  { method: 'GET', path: `/v1/${collection}` },
  { method: 'GET', path: `/v1/${collection}/:id` },
  { method: 'PATCH', path: `/v1/${collection}/:id` },
  { method: 'DELETE', path: `/v1/${collection}/:id` },
  { method: 'POST', path: `/v1/${collection}/:id/update` },
];

export const HARNESS_ROUTES: readonly RouteSpec[] = Object.freeze([
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/openapi.json' },
  // /docs and Swagger UI's files hold no data (the page asks for the key; /openapi.json needs it).
  { method: 'GET', path: '/docs', public: true },
  { method: 'GET', path: '/docs/init.js', public: true },
  { method: 'GET', path: '/docs/login.css', public: true },
  { method: 'GET', path: '/docs/:id', public: true },
  v2('POST', 'run'),
  v2('POST', 'runsync'),
  v2('GET', 'status/:jobId'),
  v2('GET', 'status-sync/:jobId'),
  v2('GET', 'stream/:jobId'),
  v2('POST', 'cancel/:jobId'),
  v2('POST', 'retry/:jobId'),
  v2('POST', 'purge-queue'),
  v2('GET', 'health'),
  v2('GET', 'requests'),
  v2('GET', 'logs'),
  v2('POST', 'openai/v1/*'),
  v2('GET', 'openai/v1/models'),
  v2('GET', 'job-take/:workerId'),
  v2('GET', 'job-take-batch/:workerId'),
  v2('POST', 'job-done/:workerId/:jobId'),
  v2('POST', 'job-stream/:workerId/:jobId'),
  v2('GET', 'job-stop/:workerId'),
  v2('GET', 'ping/:workerId'),
  ...management('templates'),
  ...management('networkvolumes'),
  ...management('endpoints'),
  { method: 'GET', path: '/v1/pods' },
  { method: 'GET', path: '/v1/pods/:id' },
  { method: 'GET', path: '/ui', public: true },
  { method: 'GET', path: '/ui/static/:id', public: true },
  { method: 'GET', path: '/ui/vendor/:id', public: true },
  { method: 'GET', path: '/ui/api/overview' },
  { method: 'GET', path: '/ui/api/endpoints/:endpointId/jobs' },
  { method: 'GET', path: '/ui/api/jobs' },
  { method: 'GET', path: '/ui/api/jobs/matching' },
  { method: 'POST', path: '/ui/api/jobs/bulk' },
  { method: 'GET', path: '/ui/api/endpoints/:endpointId/jobs/:jobId' },
  { method: 'GET', path: '/ui/api/endpoints/:endpointId/jobs/:jobId/attempts' },
  { method: 'GET', path: '/ui/api/endpoints/:endpointId/jobs/:jobId/values/:id' },
  { method: 'GET', path: '/ui/api/scale-events' },
  { method: 'GET', path: '/ui/api/logs' },
  // Load-balancing endpoints: registration, and the pass-through to the workers.
  v2('POST', 'load-balancing/workers'),
  v2('GET', 'load-balancing/workers'),
  v2('DELETE', 'load-balancing/workers/:workerId'),
  ...(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const).flatMap((method): RouteSpec[] => [
    { method, path: '/lb/:endpointId' },
    { method, path: '/lb/:endpointId/*' },
  ]),
]);

/**
 * Routes not in HARNESS_ROUTES because a request with the key stays open: the
 * dashboard's event stream runs until the page leaves (test/harness/http/ui-routes.unit.test.ts
 * covers it). Without the key it answers 401 at once like the others.
 */
export const STREAMING_ROUTES: readonly RouteSpec[] = Object.freeze([{ method: 'GET', path: '/ui/api/events' }]);

/** (route, method) pairs fastify has registered, HEAD left out (it comes with every GET). */
export function registeredRouteCount(app: FastifyInstance): number {
  const tree = app.printRoutes({ commonPrefix: false });
  let count = 0;
  for (const match of tree.matchAll(/\(([A-Z, ]+)\)/g)) {
    count += (match[1] ?? '').split(',').filter((method) => method.trim() !== 'HEAD').length;
  }
  return count;
}

/** `spec.path` with its placeholders filled. */
export function fillPath(spec: RouteSpec, values: { endpointId: string; jobId: string; workerId: string; id: string; rest: string }): string {
  return spec.path
    .replace(':endpointId', values.endpointId)
    .replace(':jobId', values.jobId)
    .replace(':workerId', values.workerId)
    .replace(':id', values.id)
    .replace('*', values.rest);
}
