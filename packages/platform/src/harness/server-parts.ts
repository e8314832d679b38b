/**
 * @module harness/server-parts
 * The parts the HTTP server's routes work on, beyond the harness and the stores: the
 * webhook sender (and the dashboard's log of its deliveries), the dashboard's attempt
 * log, load balancing, the store-outage watch, the queue-room reservations, the ids
 * deleted through /v1 and the rate limiter. The composition root (compose.ts) makes
 * them here with the server's resolved options, each once, bound to the harness; the
 * server (server.ts) registers its routes on them and stops them as it closes.
 */
import type { Logger } from 'pino';
import { type Harness, type Metrics, TargetPolicy } from 'serverless-worker/internal';
import type { LaunchedWorkersView } from './launcher/launched-workers-view.js';
import type { ManagementStore } from './management/index.js';
import { LoadBalancing } from './load-balancing/index.js';
import { isLoopbackHost } from './http/bind-address.js';
import { StoreOutage } from './http/store-outage.js';
import { bindJobMetrics } from './http/job-metrics.js';
import { RateLimiter, rateGate, type RateGate, type RateLimitHookOptions } from './http/rate-limit/index.js';
import { QueueRoomReservations } from './queue-api/early-queue-room.js';
import { bindAttemptLog } from './dashboard/attempt-binding.js';
import { AttemptLog } from './dashboard/attempt-log.js';
import { WebhookLog } from './dashboard/webhook-log.js';
import { WebhookSender, bindWebhooks } from './webhooks/index.js';
import { DeletedEndpointIds, warnOnCreatedOnUse } from './unknown-endpoints.js';
import { rateLimitTable, type HarnessServerConfig } from './server-options.js';

/** The port the server listens on, known once it listens (port 0 picks one); until then no request can make a job end. */
export class ListenedPort {
  #port: number | undefined;

  get port(): number | undefined {
    return this.#port;
  }

  set(port: number): void {
    this.#port = port;
  }
}

/** The spec 8.2 limiter, as the rate-limit onRequest hook uses it. */
export interface RateLimits {
  readonly options: RateLimitHookOptions;
  readonly gate: RateGate;
}

export interface ServerParts {
  readonly harness: Harness;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The /v1 routes' store (the launcher's too); undefined with management off. */
  readonly managementStore: ManagementStore | undefined;
  /** Workers the harness runs itself (the launcher's view); undefined: none. */
  readonly launchedWorkers: LaunchedWorkersView | undefined;
  readonly webhooks: WebhookSender;
  /** The dashboard's record of webhook deliveries and of each job's attempts; undefined with the dashboard off. */
  readonly dashboardLogs: { readonly webhooks: WebhookLog; readonly attempts: AttemptLog } | undefined;
  readonly loadBalancing: LoadBalancing;
  readonly storeOutage: StoreOutage;
  readonly queueRoom: QueueRoomReservations;
  readonly deletedEndpoints: DeletedEndpointIds;
  /** undefined with rate limits off. */
  readonly rateLimits: RateLimits | undefined;
  /** Filled by the server once it listens: webhooks and load-balancing workers never reach the harness itself. */
  readonly listenedPort: ListenedPort;
  /** Unbind from the harness, stop retries and timers. Once; the server calls it as it closes, before its connections end. */
  stop(): void;
}

/** What the composition root made before the server's parts: they share it. */
export interface SharedParts {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly managementStore: ManagementStore | undefined;
  readonly launchedWorkers: LaunchedWorkersView | undefined;
}

function rateLimitsFor(config: HarnessServerConfig): RateLimits | undefined {
  if (config.rateLimits === false) return undefined;
  const { requestsPerWorker, windowMs, limits, now } = config.rateLimits;
  const { harness } = config;
  const limiter = new RateLimiter({ windowMs, now: now ?? (() => harness.clock.now()) });
  const options = { harness, limiter, limits: rateLimitTable(limits), requestsPerWorker };
  return { options, gate: rateGate(options) };
}

function webhookSender(config: HarnessServerConfig, shared: SharedParts, listenedPort: ListenedPort, log: WebhookLog | undefined): WebhookSender {
  // A harness on loopback has local callers only: they may reach loopback already. On the network, they may not.
  const policy = new TargetPolicy({ selfPort: () => listenedPort.port, loopback: isLoopbackHost(config.host), allow: config.webhook.allow });
  return new WebhookSender({
    policy,
    settings: config.webhook,
    // Retries wait on the harness's clock, like every other time rule (tests drive it).
    clock: config.harness.clock,
    logger: shared.logger.child({ component: 'webhooks' }),
    metrics: shared.metrics,
    ...(log ? { onOutcome: (outcome) => log.record(outcome) } : {}),
  });
}

/** Make the server's parts and bind them to the harness (webhooks, job metrics, the attempt log start recording now). */
export function makeServerParts(config: HarnessServerConfig, shared: SharedParts): ServerParts {
  const { harness } = config;
  const { logger } = shared;
  const now = (): number => harness.clock.now();
  const listenedPort = new ListenedPort();
  // The dashboard's job attempts and webhook deliveries (bounded), recorded from the start so the job page can show them.
  const dashboardLogs = config.dashboard !== false ? { webhooks: new WebhookLog(undefined, now), attempts: new AttemptLog(undefined, now) } : undefined;
  const webhooks = webhookSender(config, shared, listenedPort, dashboardLogs?.webhooks);
  const reach = { selfPort: () => listenedPort.port, authenticated: config.apiKey !== undefined };
  const loadBalancing = new LoadBalancing(config.loadBalancing, logger.child({ component: 'load-balancing' }), reach, harness.clock);
  // Outages of the job store: what is down is warned, and that it is back is logged once (a cheap read probes it).
  const storeOutage = new StoreOutage(() => harness.store.listEndpoints(), logger);
  const unbind = [
    bindWebhooks(harness, webhooks),
    bindJobMetrics(harness, shared.metrics),
    dashboardLogs ? bindAttemptLog(harness, dashboardLogs.attempts) : () => {},
    warnOnCreatedOnUse(harness, logger),
  ];
  loadBalancing.start();
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    for (const off of unbind) off();
    webhooks.close();
    loadBalancing.stop();
    storeOutage.close();
  };
  return {
    ...shared,
    harness,
    webhooks,
    dashboardLogs,
    loadBalancing,
    storeOutage,
    queueRoom: new QueueRoomReservations(harness),
    deletedEndpoints: new DeletedEndpointIds(),
    rateLimits: rateLimitsFor(config),
    listenedPort,
    stop,
  };
}
