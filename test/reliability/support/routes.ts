/**
 * @module test/reliability/support/routes
 * Every route of the harness server (queue API, OpenAI-compatible routes, worker API,
 * management API, /metrics, /openapi.json and /docs, the /ui dashboard) as method and path pattern, and a check that the list is
 * complete: the count of (route, method) pairs fastify has registered, HEAD left out.
 *
 * The queue API, the worker API and the management API come from their route tables
 * (the declarations the server registers them from); the others are listed here.
 */
import type { FastifyInstance } from 'fastify';
import { fullPath, type AnyRouteSpec } from '../../../packages/platform/src/harness/http/route-spec.js';
import { MANAGEMENT_ROUTES } from '../../../packages/platform/src/harness/management/management-routes.js';
import { QUEUE_API_ROUTES } from '../../../packages/platform/src/harness/queue-api/queue-routes.js';
import { WORKER_API_ROUTES } from '../../../packages/platform/src/harness/worker-api/worker-routes.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

export interface RouteSpec {
  readonly method: Method;
  /** With `:endpointId`, `:jobId`, `:workerId`, `:id` and `*` placeholders. */
  readonly path: string;
  /** Served without the API key: the dashboard's page and modules, /docs and its files, which hold no data. */
  readonly public?: true;
}

const v2 = (method: Method, rest: string): RouteSpec => ({ method, path: `/v2/:endpointId/${rest}` });

/** A declared route as the list has it. */
const declared = (route: AnyRouteSpec): RouteSpec => ({ method: route.method, path: fullPath(route), ...(route.auth ? {} : { public: true as const }) });

/** The routes declared in route tables. */
export const DECLARED_ROUTES: readonly RouteSpec[] = Object.freeze([...QUEUE_API_ROUTES, ...WORKER_API_ROUTES, ...MANAGEMENT_ROUTES].map(declared));

export const HARNESS_ROUTES: readonly RouteSpec[] = Object.freeze([
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/openapi.json' },
  // /docs and Swagger UI's files hold no data (the page asks for the key; /openapi.json needs it).
  { method: 'GET', path: '/docs', public: true },
  { method: 'GET', path: '/docs/init.js', public: true },
  { method: 'GET', path: '/docs/login.css', public: true },
  { method: 'GET', path: '/docs/:id', public: true },
  ...DECLARED_ROUTES,
  v2('POST', 'openai/v1/*'),
  v2('GET', 'openai/v1/models'),
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
