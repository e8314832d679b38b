/**
 * @module harness/management/routes/route-helpers
 * What every management route shares: the typed path parameter, and the plugin
 * options each route group receives.
 */
import { IdParamsSchema } from '../management-routes.js';
import { parseInput } from '../parse-input.js';
import type { EndpointHooks, PodsView } from '../hooks.js';
import type { ManagementStore } from '../store/index.js';

/** The state and collaborators a route group works on. */
export interface RouteContext {
  store: ManagementStore;
  endpointHooks: EndpointHooks | undefined;
  podsView: PodsView | undefined;
}

/** The `{id}` path parameter of a route, validated. */
export function idParam(params: unknown): string {
  return parseInput(IdParamsSchema, params, { code: 'SW_INVALID_REQUEST', what: 'path' }).id;
}
