/**
 * @module harness/load-balancing/lb-route-table
 * The load-balancing registration routes under /v2/{endpointId}, declared once
 * (http/route-spec.ts): the plugin registers from them and the tests' route list is
 * derived from them. The pass-through under /lb answers every method on any path, so
 * it is no table of routes (lb-routes.ts registers it).
 */
import { defineRoute } from '../http/route-spec.js';

const base = { prefix: '/v2', tag: 'load balancing' } as const;

export const LB_ROUTES = {
  register: defineRoute({
    ...base,
    method: 'POST',
    path: '/:endpointId/load-balancing/workers',
    operationId: 'lb_register',
    summary: 'Register a load-balancing worker of the endpoint.',
    replyDescription: 'The worker as the pool sees it.',
  }),
  list: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/load-balancing/workers',
    operationId: 'lb_list',
    summary: "The endpoint's load-balancing workers.",
    replyDescription: 'The workers.',
  }),
  remove: defineRoute({
    ...base,
    method: 'DELETE',
    path: '/:endpointId/load-balancing/workers/:workerId',
    operationId: 'lb_remove',
    summary: 'Take a load-balancing worker out of the pool.',
    replyDescription: 'Removed.',
  }),
};

export const LB_REGISTRATION_ROUTES = Object.freeze(Object.values(LB_ROUTES));
