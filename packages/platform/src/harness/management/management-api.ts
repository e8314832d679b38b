/**
 * @module harness/management/management-api
 * The management API as a fastify plugin. The harness server registers it under the
 * `/v1` prefix; everything it adds (the bearer check, the error handler) stays inside
 * its own encapsulated scope, so `/v2` keeps its own rules.
 *
 *     app.register(managementApi, { prefix: '/v1', store: new InMemoryManagementStore(), apiKey })
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { ServerlessWorkerError } from 'serverless-worker/internal';
import { apiKeyHook } from '../http/api-key.js';
import { installErrorHandler } from '../http/error-reply.js';
import type { EndpointHooks, PodsView } from './hooks.js';
import { registerEndpointRoutes } from './routes/endpoints.js';
import { registerNetworkVolumeRoutes } from './routes/network-volumes.js';
import { registerPodRoutes } from './routes/pods.js';
import type { RouteContext } from './routes/route-helpers.js';
import { registerTemplateRoutes } from './routes/templates.js';
import type { ManagementStore } from './store/index.js';

export interface ManagementApiOptions {
  /** Where templates, network volumes and endpoints live. Required. */
  store: ManagementStore;
  /**
   * When set, every call must send `Authorization: Bearer <apiKey>` (401 otherwise).
   * Default: unset, no check (a harness on loopback for one developer).
   */
  apiKey?: string;
  /** Told when endpoints are created and deleted; default none. */
  endpointHooks?: EndpointHooks;
  /** Connected workers as pods for GET /pods; default none (empty list, 404 per id). */
  podsView?: PodsView;
}

function checkOptions(options: ManagementApiOptions): void {
  if (typeof options !== 'object' || options === null || typeof options.store?.createTemplate !== 'function') {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', 'managementApi: option store must be a ManagementStore (got none)');
  }
  if (options.apiKey !== undefined && (typeof options.apiKey !== 'string' || options.apiKey.length === 0)) {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', 'managementApi: option apiKey must be a non-empty string when given');
  }
  if (options.endpointHooks !== undefined && typeof options.endpointHooks.onEndpointCreated !== 'function') {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', 'managementApi: option endpointHooks must have an onEndpointCreated(id) function');
  }
  if (options.podsView !== undefined && (typeof options.podsView.listPods !== 'function' || typeof options.podsView.getPod !== 'function')) {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', 'managementApi: option podsView must have listPods() and getPod(id) functions');
  }
}

/** The management API routes (templates, network volumes, endpoints, pods). Register with `prefix: '/v1'`. */
export const managementApi: FastifyPluginAsync<ManagementApiOptions> = async (app: FastifyInstance, options) => {
  checkOptions(options);
  // Installed here too, so the plugin answers the harness's error body even on a bare app.
  installErrorHandler(app);
  if (options.apiKey !== undefined) app.addHook('onRequest', apiKeyHook(options.apiKey));
  const context: RouteContext = Object.freeze({
    store: options.store,
    endpointHooks: options.endpointHooks,
    podsView: options.podsView,
  });
  registerTemplateRoutes(app, context);
  registerNetworkVolumeRoutes(app, context);
  registerEndpointRoutes(app, context);
  registerPodRoutes(app, context);
};
