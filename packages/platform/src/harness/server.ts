/**
 * @module harness/server
 * The harness's HTTP server: the queue API and OpenAI-compatible routes (this
 * folder), the worker API (worker-api/) under `/v2`, the management API under `/v1`,
 * `/metrics` and the web dashboard at `/ui` (ui/, imported only when it is on), behind
 * one API key check and the spec 8.2 rate limits.
 *
 *     const server = await createHarnessServer({ harness: new Harness(), port: 0 });
 *     // server.url -> http://127.0.0.1:<port>; server.baseUrl -> .../v2
 *     await server.close();
 *
 * Request lifecycle: onRequest (API key: 401; rate limit: 429) -> body parsing (413,
 * 400 bad JSON) -> route (400 bad parameters, 404 unknown job or endpoint, 409 wrong
 * state) -> JSON answer. Unknown paths: 404; known path, wrong method: 405 + Allow.
 */
import type { CreateHarnessServerOptions } from './server-store.js';
import type { IncomingMessage } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { createMetrics, inputValue, type Metrics, RUNTIME_VERSION, TargetPolicy, trackFreshConnections } from 'serverless-worker/internal';
import { InMemoryManagementStore, managementApi } from './management/index.js';
import { LB_PATH_PREFIX, LoadBalancing, lbProxyRoutes, lbRegistrationRoutes } from './load-balancing/index.js';
import { apiKeyHook, createApiKeyCheck } from './http/api-key.js';
import { isLoopbackHost, localBaseUrl } from './http/bind-address.js';
import { answerClientError, installErrorHandler, sendError } from './http/error-reply.js';
import { StoreOutage } from './http/store-outage.js';
import { lazyChildLoggerFactory } from './http/lazy-child-logger.js';
import { CONNECTION_CHECK_MS, defaultMaxConnections } from './http/connection-limits.js';
import { bindJobMetrics } from './http/job-metrics.js';
import { registerMetricsRoute } from './http/metrics-route.js';
import { openAiRoutes } from './openai/index.js';
import { openApiRoutes } from './openapi/index.js';
import { harnessPodsView } from './pods-view.js';
import { serveRecordedEndpoints, sharedEndpointsHook } from './server-shared-endpoints.js';
import { DeletedEndpointIds, unknownEndpointHook, warnOnCreatedOnUse } from './unknown-endpoints.js';
import { queueApiRoutes } from './queue-api/index.js';
import { QueueRoomReservations } from './queue-api/early-queue-room.js';
import { installLeanRunsync } from './queue-api/lean-runsync.js';
import { RateLimiter, rateGate, rateLimitHook, type RateGate } from './http/rate-limit/index.js';
import { installBodyReadGate } from './http/body-read-gate.js';
import { useLenientJsonBodies } from './http/json-body.js';
import { installRouteTable } from './http/route-table.js';
import { rootAliasUrl } from './http/root-alias.js';
import { resolveServerOptions, rateLimitTable, type HarnessServerConfig, type HarnessServerOptions } from './server-options.js';
import { bindAttemptLog, withAttemptEvents } from './dashboard/attempt-binding.js';
import { AttemptLog } from './dashboard/attempt-log.js';
import { WebhookLog } from './dashboard/webhook-log.js';
import { WebhookSender, bindWebhooks } from './webhooks/index.js';
import { workerApiRoutes } from './worker-api/index.js';

export interface HarnessServer {
  readonly app: FastifyInstance;
  /** `http://<host>:<port>`, the address a local client uses (0.0.0.0 shows as 127.0.0.1). */
  readonly url: string;
  /** `<url>/v2`: the `{serverless_url}` clients take as their base URL. */
  readonly baseUrl: string;
  /** The port listened on (useful with port 0). */
  readonly port: number;
  readonly config: HarnessServerConfig;
  readonly metrics: Metrics;
  readonly webhooks: WebhookSender;
  /** Whether every route needs the API key. */
  readonly authenticated: boolean;
  /** The load-balancing endpoints (workers registered under /v2/{id}/load-balancing/workers, reached at /lb/{id}/). */
  readonly loadBalancing: LoadBalancing;
  /** `<url>/ui`, the web dashboard; undefined when it is off. */
  readonly dashboardUrl: string | undefined;
  /** Stop listening: waiting requests are answered at once, webhooks under way are abandoned. A harness given stays open; one made for the `store` option is closed. */
  close(): Promise<void>;
}

/**
 * Build the server, listen, and answer once it accepts connections. The parts it works
 * on (the harness and its store, the management store, the launcher) are made by the
 * composition root (../compose.ts), which owns them.
 */
export async function createHarnessServer(options: CreateHarnessServerOptions): Promise<HarnessServer> {
  const { composeHarness } = await import('./compose.js');
  return (await composeHarness(options)).server;
}

/**
 * The server over parts already made (composeHarness calls it, after refusing an unsafe
 * bind address): build, listen, answer once it accepts connections. `onClose` runs last in close(), for what the caller opened.
 */
export async function listenHarnessServer(options: HarnessServerOptions, onClose: () => Promise<void> = async () => {}): Promise<HarnessServer> {
  const config = resolveServerOptions(options);
  const logger: Logger = config.logger ?? pino({ level: 'silent' });
  // Process metrics from the first /metrics scrape on: an idle harness nobody scrapes runs no event-loop monitor.
  const metrics = config.metrics ?? createMetrics({ defaultMetrics: 'from-first-read' });
  const { harness } = config;
  const closing = new AbortController();

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Clients poll /status and /stream in loops: a log line per request drowns the job logs.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log becomes a pino child only when a request logs (lazy-child-logger.ts).
    childLoggerFactory: lazyChildLoggerFactory,
    // Slow or idle clients are closed (http/connection-limits.ts); answers may take as long as they need.
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout: config.headersTimeoutMs, requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: CONNECTION_CHECK_MS },
    // Our own error bodies while closing: waiting requests are answered by the closing signal.
    return503OnClosing: false,
    // Endpoint ids up to 128 characters and job ids up to 200 reach our own validation.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    // Bad URLs and over-long parameters get our JSON error body too.
    frameworkErrors: (error, _request, reply) => void sendError(reply, error),
    // Requests the HTTP parser refuses (non-ASCII bytes in the path, headers too large) too.
    clientErrorHandler: answerClientError,
    // --serve-api: one endpoint's queue API at the root too (root-alias.ts).
    ...(config.rootEndpoint !== undefined ? { rewriteUrl: (request: IncomingMessage) => rootAliasUrl(request.url ?? '/', config.rootEndpoint ?? '') } : {}),
  });
  installErrorHandler(app);
  // Outages of the job store: what is down is warned, and that it is back is logged once (a cheap read probes it).
  const storeOutage = new StoreOutage(() => harness.store.listEndpoints(), logger);
  app.decorate('storeOutage', storeOutage);
  // At the root too: a 404 or 405 must not turn into a body-parsing 400 first.
  useLenientJsonBodies(app);
  installRouteTable(app);
  if (config.apiKey !== undefined) app.addHook('onRequest', apiKeyHook(config.apiKey));
  let gate: RateGate | undefined;
  if (config.rateLimits !== false) {
    const { requestsPerWorker, windowMs, limits, now } = config.rateLimits;
    const limiter = new RateLimiter({ windowMs, now: now ?? (() => harness.clock.now()) });
    const rateOptions = { harness, limiter, limits: rateLimitTable(limits), requestsPerWorker };
    gate = rateGate(rateOptions);
    app.addHook('onRequest', rateLimitHook(rateOptions, gate));
  }
  const managementStore =
    config.management !== false ? (config.management.store ?? new InMemoryManagementStore({ now: () => harness.clock.now() })) : undefined;
  const endpointLookup = managementStore ? sharedEndpointsHook(harness, managementStore) : undefined;
  if (endpointLookup) app.addHook('onRequest', endpointLookup);
  const deletedEndpoints = new DeletedEndpointIds();
  const unknownEndpoints = managementStore ? unknownEndpointHook(harness, managementStore, deletedEndpoints) : undefined;
  if (unknownEndpoints) app.addHook('onRequest', unknownEndpoints);
  const stopWarningOnCreatedOnUse = warnOnCreatedOnUse(harness, logger);

  const webhookLog = config.dashboard !== false ? new WebhookLog(undefined, () => harness.clock.now()) : undefined;
  // Known once listening (port 0): until then no request can make a job end anyway.
  let listenedPort: number | undefined;
  const selfPort = (): number | undefined => listenedPort;
  // A harness on loopback has local callers only: they may reach loopback already. On the network, they may not.
  const webhookPolicy = new TargetPolicy({ selfPort, loopback: isLoopbackHost(config.host), allow: config.webhook.allow });
  const webhooks = new WebhookSender({
    policy: webhookPolicy,
    settings: config.webhook,
    // Retries wait on the harness's clock, like every other time rule (tests drive it).
    clock: harness.clock,
    logger: logger.child({ component: 'webhooks' }),
    metrics,
    ...(webhookLog ? { onOutcome: (outcome) => webhookLog.record(outcome) } : {}),
  });
  const unbindWebhooks = bindWebhooks(harness, webhooks);
  const unbindJobMetrics = bindJobMetrics(harness, metrics);
  // The dashboard's job attempts (bounded), recorded from the start so the job page can show them.
  const attemptLog = config.dashboard !== false ? new AttemptLog(undefined, () => harness.clock.now()) : undefined;
  const unbindAttemptLog = attemptLog ? bindAttemptLog(harness, attemptLog) : () => {};

  // An input kept as its text (a large body, job/raw-json.ts) is parsed only when there is a schema to check.
  const checkInput = (endpointId: string, input: unknown): void => {
    const check = config.endpointInputs[endpointId]?.check;
    if (check) check(inputValue(input));
  };
  const loadBalancing = new LoadBalancing(
    config.loadBalancing,
    logger.child({ component: 'load-balancing' }),
    { selfPort, authenticated: config.apiKey !== undefined },
    config.harness.clock,
  );
  const { launchedWorkers } = config;
  const queueRoom = new QueueRoomReservations(harness);
  const queueContext = { harness, closing: closing.signal, streamWaitMs: config.streamWaitMs, checkInput, launchedWorkers, loadBalancing, queueRoom };
  // The common /runsync answered in front of fastify, with the same checks (queue-api/lean-runsync.ts).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  installLeanRunsync(app.server, {
    context: queueContext,
    rootEndpoint: config.rootEndpoint,
    apiKey: config.apiKey !== undefined ? createApiKeyCheck(config.apiKey) : undefined,
    rateGate: gate,
    deleted: (id) => deletedEndpoints.has(id),
    queueRoom,
    parseJson: (text, done) => void parseJson(undefined as never, text, done),
    logger,
    storeOutage,
  });
  // Before every other request listener: only a few large bodies are read at once, so a
  // turn of the loop stays short and new connections (a /health probe's) are taken promptly.
  installBodyReadGate(app.server);
  registerMetricsRoute(app, metrics);
  await app.register(queueApiRoutes, { ...queueContext, prefix: '/v2' });
  await app.register(openAiRoutes, { ...queueContext, timeoutMs: config.openaiTimeoutMs, prefix: '/v2' });
  const workerApiEvents = attemptLog ? withAttemptEvents(config.workerApi.events, attemptLog) : config.workerApi.events;
  await app.register(workerApiRoutes, { ...config.workerApi, ...(workerApiEvents ? { events: workerApiEvents } : {}), harness, prefix: '/v2' });
  loadBalancing.start();
  await app.register(lbRegistrationRoutes, { lb: loadBalancing, prefix: '/v2' });
  await app.register(lbProxyRoutes, { lb: loadBalancing, prefix: LB_PATH_PREFIX });
  // Endpoint names (the /v1 endpoints') beside their ids on the dashboard and in /docs.
  const endpointNames = managementStore
    ? async () => Object.fromEntries((await managementStore.listEndpoints()).map((endpoint) => [endpoint.id, endpoint.name]))
    : undefined;
  await app.register(openApiRoutes, {
    harness,
    endpointInputs: config.endpointInputs,
    rootEndpoint: config.rootEndpoint,
    authenticated: config.apiKey !== undefined,
    ...(config.dashboard !== false && config.dashboard.testInput !== undefined ? { testInput: config.dashboard.testInput } : {}),
    endpointNames,
    management: config.management !== false && managementStore !== undefined,
  });
  if (config.dashboard !== false && webhookLog && attemptLog) {
    const { registerDashboard, builtInPanels } = await import('./dashboard/index.js');
    const settings = { ...config.dashboard, panels: [...builtInPanels(harness, loadBalancing, launchedWorkers), ...config.dashboard.panels] };
    registerDashboard(app, {
      harness,
      settings,
      webhookLog,
      attemptLog,
      endpointInputs: config.endpointInputs,
      authenticated: config.apiKey !== undefined,
      version: RUNTIME_VERSION,
      ...(endpointNames ? { endpointNames } : {}),
      launchedWorkers,
    });
  }
  if (config.management !== false && managementStore) {
    await serveRecordedEndpoints(harness, managementStore);
    await app.register(managementApi, {
      prefix: '/v1',
      store: managementStore,
      podsView: config.management.podsView ?? harnessPodsView(harness, launchedWorkers),
      endpointHooks: {
        onEndpointCreated: (id, endpoint) => {
          deletedEndpoints.remove(id);
          harness
            .createEndpoint(id)
            .configure({ defaultExecutionTimeoutMs: endpoint.executionTimeoutMs })
            .catch((error: unknown) => logger.error({ err: error, endpointId: id }, 'could not store the endpoint settings'));
        },
        onEndpointUpdated: (endpoint) => {
          const jobs = harness.findEndpoint(endpoint.id);
          jobs
            ?.configure({ defaultExecutionTimeoutMs: endpoint.executionTimeoutMs })
            .catch((error: unknown) => logger.error({ err: error, endpointId: endpoint.id }, 'could not store the endpoint settings'));
        },
        onEndpointDeleted: (id) => {
          deletedEndpoints.add(id);
          harness.deleteEndpoint(id);
        },
      },
    });
  }

  // Past it a new connection is closed at once: descriptors stay for outgoing calls (connection-limits.ts).
  app.server.maxConnections = config.maxConnections ?? defaultMaxConnections();
  const fresh = trackFreshConnections(app.server);
  const close = async (): Promise<void> => {
    if (closing.signal.aborted) return;
    closing.abort();
    unbindWebhooks();
    stopWarningOnCreatedOnUse();
    unbindJobMetrics();
    unbindAttemptLog();
    webhooks.close();
    loadBalancing.stop();
    storeOutage.close();
    fresh.closeAll();
    await app.close();
    await onClose();
  };

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  listenedPort = port;
  const listenedOn = typeof address === 'object' && address !== null ? address.address : config.host;
  const url = localBaseUrl(isLoopbackHost(config.host) && config.host === 'localhost' ? '127.0.0.1' : listenedOn, port);
  if (config.apiKey === undefined) {
    logger.warn({ host: config.host, port }, 'no API key: the harness accepts every request; it listens on loopback only');
  }
  logger.info({ url, authenticated: config.apiKey !== undefined }, 'harness listening');
  return Object.freeze({
    app,
    url,
    baseUrl: `${url}/v2`,
    port,
    config,
    metrics,
    webhooks,
    authenticated: config.apiKey !== undefined,
    loadBalancing,
    dashboardUrl: config.dashboard !== false ? `${url}/ui` : undefined,
    close,
  });
}
