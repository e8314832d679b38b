/**
 * @module harness/server-routes
 * What the server answers, registered on the parts it is given (server-parts.ts): the
 * request hooks (API key, rate limits, endpoints of a shared store, unknown endpoints)
 * and each feature's routes: the queue API and
 * OpenAI-compatible calls, the worker API and load balancing under /v2, /metrics,
 * /openapi.json and /docs, the dashboard at /ui (imported only when it is on) and the
 * management API under /v1.
 */
import type { FastifyInstance } from 'fastify';
import { inputValue, RUNTIME_VERSION } from 'serverless-worker/internal';
import { managementApi } from './management/index.js';
import type { EndpointHooks } from './management/hooks.js';
import { LB_PATH_PREFIX, lbProxyRoutes, lbRegistrationRoutes } from './load-balancing/index.js';
import { apiKeyHook } from './http/api-key.js';
import { rateLimitHook } from './http/rate-limit/index.js';
import { registerMetricsRoute } from './http/metrics-route.js';
import { openAiRoutes } from './openai/index.js';
import { openApiRoutes } from './openapi/index.js';
import { harnessPodsView } from './pods-view.js';
import { sharedEndpointsHook } from './server-shared-endpoints.js';
import { isSubmitRoute, unknownEndpointHook } from './unknown-endpoints.js';
import { addRouteOnRequest } from './http/route-hooks.js';
import { answerNotFound } from './http/route-table.js';
import { queueApiRoutes } from './queue-api/index.js';
import { BODY_READ_SLOTS, installBodyReadGate } from './http/body-read-gate.js';
import { bodyReadGateMetrics } from './http/body-read-gate-metrics.js';
import { withAttemptEvents } from './dashboard/attempt-binding.js';
import { workerApiRoutes } from './worker-api/index.js';
import type { HarnessServerConfig } from './server-options.js';
import type { ServerParts } from './server-parts.js';

/** The onRequest hooks, in order: the API key (401), 404/405 for a body waiting to be read (route-table.ts), the rate limits (429), the endpoints a shared store records, unknown endpoints (404). */
export function installRequestHooks(app: FastifyInstance, config: HarnessServerConfig, parts: ServerParts): void {
  const { harness, managementStore } = parts;
  if (config.apiKey !== undefined) app.addHook('onRequest', apiKeyHook(config.apiKey));
  answerNotFound(app);
  // On the routes that count as an operation only (http/route-hooks.ts), as the unknown-endpoint check below on the submit routes.
  if (parts.rateLimits)
    addRouteOnRequest(app, (route) => route.config?.operation !== undefined, rateLimitHook(parts.rateLimits.options, parts.rateLimits.gate));
  if (!managementStore) return;
  const endpointLookup = sharedEndpointsHook(harness, managementStore);
  // Per route too (every one), so that it runs after the rate limit, as when all three were server-wide.
  if (endpointLookup) addRouteOnRequest(app, () => true, endpointLookup);
  const unknownEndpoints = unknownEndpointHook(harness, managementStore, parts.deletedEndpoints);
  if (unknownEndpoints) addRouteOnRequest(app, isSubmitRoute, unknownEndpoints);
}

/** The queue API's context, shared by its routes and the OpenAI-compatible ones. */
function queueContext(config: HarnessServerConfig, parts: ServerParts, closing: AbortSignal) {
  const { harness, launchedWorkers, loadBalancing, queueRoom } = parts;
  // An input kept as its text (a large body, job/raw-json.ts) is parsed only when there is a schema to check.
  const checkInput = (endpointId: string, input: unknown): void => {
    const check = config.endpointInputs[endpointId]?.check;
    if (check) check(inputValue(input));
  };
  return { harness, closing, streamWaitMs: config.streamWaitMs, checkInput, launchedWorkers, loadBalancing, queueRoom };
}

/** The harness's routes on `app` (the request hooks already installed); `closing` answers waiting requests as the server closes. */
export async function registerRoutes(app: FastifyInstance, config: HarnessServerConfig, parts: ServerParts, closing: AbortSignal): Promise<void> {
  const { harness, loadBalancing } = parts;
  const context = queueContext(config, parts, closing);
  // Before every other request listener: only a few large bodies are read at once, so a
  // turn of the loop stays short and new connections (a /health probe's) are taken promptly.
  installBodyReadGate(app.server, BODY_READ_SLOTS, bodyReadGateMetrics(parts.metrics));
  registerMetricsRoute(app, parts.metrics);
  await app.register(queueApiRoutes, { ...context, prefix: '/v2' });
  await app.register(openAiRoutes, { ...context, timeoutMs: config.openaiTimeoutMs, prefix: '/v2' });
  const attempts = parts.dashboardLogs?.attempts;
  const workerApiEvents = attempts ? withAttemptEvents(config.workerApi.events, attempts) : config.workerApi.events;
  await app.register(workerApiRoutes, { ...config.workerApi, ...(workerApiEvents ? { events: workerApiEvents } : {}), harness, prefix: '/v2' });
  await app.register(lbRegistrationRoutes, { lb: loadBalancing, prefix: '/v2' });
  await app.register(lbProxyRoutes, { lb: loadBalancing, prefix: LB_PATH_PREFIX });
  await registerPages(app, config, parts);
  await registerManagement(app, config, parts);
}

/** Endpoint names (the /v1 endpoints') beside their ids on the dashboard and in /docs; undefined with management off. */
function endpointNamesOf(parts: ServerParts): (() => Promise<Readonly<Record<string, string>>>) | undefined {
  const store = parts.managementStore;
  return store ? async () => Object.fromEntries((await store.listEndpoints()).map((endpoint) => [endpoint.id, endpoint.name])) : undefined;
}

/** /openapi.json and /docs, and the dashboard at /ui when it is on. */
async function registerPages(app: FastifyInstance, config: HarnessServerConfig, parts: ServerParts): Promise<void> {
  const { harness, launchedWorkers } = parts;
  const endpointNames = endpointNamesOf(parts);
  await app.register(openApiRoutes, {
    harness,
    endpointInputs: config.endpointInputs,
    rootEndpoint: config.rootEndpoint,
    authenticated: config.apiKey !== undefined,
    ...(config.dashboard !== false && config.dashboard.testInput !== undefined ? { testInput: config.dashboard.testInput } : {}),
    endpointNames,
    management: parts.managementStore !== undefined,
  });
  if (config.dashboard === false || !parts.dashboardLogs) return;
  const { registerDashboard, builtInPanels } = await import('./dashboard/index.js');
  registerDashboard(app, {
    harness,
    settings: { ...config.dashboard, panels: [...builtInPanels(harness, parts.loadBalancing, launchedWorkers), ...config.dashboard.panels] },
    webhookLog: parts.dashboardLogs.webhooks,
    attemptLog: parts.dashboardLogs.attempts,
    endpointInputs: config.endpointInputs,
    authenticated: config.apiKey !== undefined,
    version: RUNTIME_VERSION,
    ...(endpointNames ? { endpointNames } : {}),
    launchedWorkers,
  });
}

/** What a /v1 endpoint's creation, update and deletion do to the harness's endpoints. */
function endpointHooks(parts: ServerParts): EndpointHooks {
  const { harness, logger, deletedEndpoints } = parts;
  const stored = (endpointId: string) => (error: unknown) => logger.error({ err: error, endpointId }, 'could not store the endpoint settings');
  return {
    onEndpointCreated: (id, endpoint) => {
      deletedEndpoints.remove(id);
      harness.createEndpoint(id).configure({ defaultExecutionTimeoutMs: endpoint.executionTimeoutMs }).catch(stored(id));
    },
    onEndpointUpdated: (endpoint) => {
      harness.findEndpoint(endpoint.id)?.configure({ defaultExecutionTimeoutMs: endpoint.executionTimeoutMs }).catch(stored(endpoint.id));
    },
    onEndpointDeleted: (id) => {
      deletedEndpoints.add(id);
      harness.deleteEndpoint(id);
    },
  };
}

/** The management API under /v1, when it is on. */
async function registerManagement(app: FastifyInstance, config: HarnessServerConfig, parts: ServerParts): Promise<void> {
  if (config.management === false || !parts.managementStore) return;
  await app.register(managementApi, {
    prefix: '/v1',
    store: parts.managementStore,
    podsView: config.management.podsView ?? harnessPodsView(parts.harness, parts.launchedWorkers),
    endpointHooks: endpointHooks(parts),
  });
}
