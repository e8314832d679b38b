/**
 * @module test/reliability/support/routes
 * Every route of the harness server (queue API, OpenAI-compatible routes, worker API,
 * management API, /metrics, /openapi.json and /docs, the /ui dashboard) as method and path pattern, and a check that the list is
 * complete: the count of (route, method) pairs fastify has registered, HEAD left out.
 *
 * Every route comes from the route tables (the declarations the server registers them
 * from), but the load-balancing pass-through under /lb, which answers every method on
 * any path and is listed here.
 */
import type { FastifyInstance } from 'fastify';
import { DASHBOARD_API_ROUTES, DASHBOARD_ROUTES } from '../../../packages/platform/src/harness/dashboard/dashboard-routes.js';
import { METRICS_ROUTE } from '../../../packages/platform/src/harness/http/metrics-route.js';
import { fullPath, type AnyRouteSpec } from '../../../packages/platform/src/harness/http/route-spec.js';
import { LB_REGISTRATION_ROUTES } from '../../../packages/platform/src/harness/load-balancing/lb-route-table.js';
import { MANAGEMENT_ROUTES } from '../../../packages/platform/src/harness/management/management-routes.js';
import { OPENAI_API_ROUTES } from '../../../packages/platform/src/harness/openai/openai-routes.js';
import { OPENAPI_DOCS_ROUTES } from '../../../packages/platform/src/harness/openapi/openapi-routes.js';
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

/** A declared route as the list has it. */
const declared = (route: AnyRouteSpec): RouteSpec => ({ method: route.method, path: fullPath(route), ...(route.auth ? {} : { public: true as const }) });

/** The dashboard's event stream: see STREAMING_ROUTES. */
const STREAMING: readonly AnyRouteSpec[] = [DASHBOARD_ROUTES.events];

/** The routes declared in route tables, the streaming one aside. */
export const DECLARED_ROUTES: readonly RouteSpec[] = Object.freeze(
  [
    METRICS_ROUTE,
    ...OPENAPI_DOCS_ROUTES,
    ...QUEUE_API_ROUTES,
    ...OPENAI_API_ROUTES,
    ...WORKER_API_ROUTES,
    ...MANAGEMENT_ROUTES,
    ...DASHBOARD_API_ROUTES.filter((route) => !STREAMING.includes(route)),
    ...LB_REGISTRATION_ROUTES,
  ].map(declared),
);

export const HARNESS_ROUTES: readonly RouteSpec[] = Object.freeze([
  ...DECLARED_ROUTES,
  // The load-balancing pass-through to the workers: every method, on the endpoint's path and below.
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
export const STREAMING_ROUTES: readonly RouteSpec[] = Object.freeze(STREAMING.map(declared));

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
