/**
 * @module harness/server
 * The harness's HTTP server over parts the composition root made (compose.ts,
 * server-parts.ts): the fastify instance, its request hooks and the features' routes
 * (server-routes.ts) registered on those parts, listening, and closing. It builds no
 * part of its own: the queue API and OpenAI-compatible routes and the worker API under
 * `/v2`, the management API under `/v1`, `/metrics` and the web dashboard at `/ui`
 * (imported only when it is on), behind one API key check and the spec 8.2 rate limits.
 *
 *     const server = await createHarnessServer({ harness: new Harness(), port: 0 });   // compose.ts
 *     // server.url -> http://127.0.0.1:<port>; server.baseUrl -> .../v2
 *     await server.close();
 *
 * Request lifecycle: onRequest (API key: 401; rate limit: 429) -> body parsing (413,
 * 400 bad JSON) -> route (400 bad parameters, 404 unknown job or endpoint, 409 wrong
 * state) -> JSON answer. Unknown paths: 404; known path, wrong method: 405 + Allow.
 */
import type { IncomingMessage } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type Metrics, trackFreshConnections } from 'serverless-worker/internal';
import type { LoadBalancing } from './load-balancing/index.js';
import { isLoopbackHost, localBaseUrl } from './http/bind-address.js';
import { answerClientError, installErrorHandler, sendError } from './http/error-reply.js';
import { lazyChildLoggerFactory } from './http/lazy-child-logger.js';
import { ZOD_ONLY_SCHEMAS } from './http/zod-only-schemas.js';
import { CONNECTION_CHECK_MS, defaultMaxConnections } from './http/connection-limits.js';
import { useLenientJsonBodies } from './http/json-body.js';
import { installRouteTable } from './http/route-table.js';
import { collectWhenIdle } from './idle-collect.js';
import { rootAliasUrl } from './http/root-alias.js';
import type { HarnessServerConfig } from './server-options.js';
import type { ServerParts } from './server-parts.js';
import { installRequestHooks, registerRoutes } from './server-routes.js';
import type { WebhookSender } from './webhooks/index.js';

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

/** What the server's close() runs around its own: the composition root's. */
export interface ServerLifecycle {
  /** As close() starts, before the connections end: what must not act on a request or a job any more (the parts' bindings, retries, timers). */
  readonly closing: () => void;
  /** Once the server is closed: what the composition root opened for it (the launcher, the stores). */
  readonly closed: () => Promise<void>;
}

/** The fastify instance with the server's settings, its error bodies, body parsing and route table (no route yet). */
function fastifyFor(config: HarnessServerConfig, logger: Logger): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Clients poll /status and /stream in loops: a log line per request drowns the job logs.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log becomes a pino child only when a request logs (lazy-child-logger.ts).
    childLoggerFactory: lazyChildLoggerFactory,
    // Routes validate with zod: Ajv and fast-json-stringify are never loaded (http/zod-only-schemas.ts).
    schemaController: ZOD_ONLY_SCHEMAS,
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
  // At the root too: a 404 or 405 must not turn into a body-parsing 400 first.
  useLenientJsonBodies(app);
  installRouteTable(app);
  return app;
}

/** The address a local client uses: the port listened on (port 0 picks one), 0.0.0.0 and localhost shown as 127.0.0.1. */
function listenedAddress(app: FastifyInstance, config: HarnessServerConfig): { url: string; port: number } {
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const listenedOn = typeof address === 'object' && address !== null ? address.address : config.host;
  return { url: localBaseUrl(isLoopbackHost(config.host) && config.host === 'localhost' ? '127.0.0.1' : listenedOn, port), port };
}

/**
 * The server over parts already made (compose.ts makes them, after refusing an unsafe
 * bind address): register the routes on them, listen, answer once it accepts connections.
 * close() answers waiting requests, runs `lifecycle.closing`, closes the connections, then
 * runs `lifecycle.closed`; a failed start closes the same way before it throws.
 */
export async function listenHarnessServer(config: HarnessServerConfig, parts: ServerParts, lifecycle: ServerLifecycle): Promise<HarnessServer> {
  const { logger } = parts;
  const closing = new AbortController();
  const app = fastifyFor(config, logger);
  app.decorate('storeOutage', parts.storeOutage);
  let fresh: ReturnType<typeof trackFreshConnections> | undefined;
  // A collection once the store let go of many bodies and the loop is idle (idle-collect.ts).
  const collector = collectWhenIdle();
  const close = async (): Promise<void> => {
    if (closing.signal.aborted) return;
    closing.abort();
    collector.stop();
    lifecycle.closing();
    fresh?.closeAll();
    await app.close();
    await lifecycle.closed();
  };
  try {
    installRequestHooks(app, config, parts);
    await registerRoutes(app, config, parts, closing.signal);
    // Past it a new connection is closed at once: descriptors stay for outgoing calls (connection-limits.ts).
    app.server.maxConnections = config.maxConnections ?? defaultMaxConnections();
    fresh = trackFreshConnections(app.server);
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await close();
    throw error;
  }
  const { url, port } = listenedAddress(app, config);
  parts.listenedPort.set(port);
  if (config.apiKey === undefined) logger.warn({ host: config.host, port }, 'no API key: the harness accepts every request; it listens on loopback only');
  logger.info({ url, authenticated: config.apiKey !== undefined }, 'harness listening');
  const { metrics, webhooks, loadBalancing } = parts;
  const authenticated = config.apiKey !== undefined;
  const dashboardUrl = config.dashboard !== false ? `${url}/ui` : undefined;
  return Object.freeze({ app, url, baseUrl: `${url}/v2`, port, config, metrics, webhooks, authenticated, loadBalancing, dashboardUrl, close });
}
