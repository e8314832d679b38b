/**
 * @module harness/server-options
 * Options of `createHarnessServer`, validated once with zod and then frozen. A bad
 * option throws SW_INVALID_OPTIONS naming it, what it allows and what it got.
 */
import type { Logger } from 'pino';
import * as z from 'zod';
import {
  AllowListSchema,
  EXECUTION_TIMEOUT_MS,
  Harness,
  type Metrics,
  parseOnceOrThrow,
  RUNSYNC_WAIT_MS,
  ServerlessWorkerError,
} from 'serverless-worker/internal';
import type { LaunchedWorkersView } from './launcher/launched-workers-view.js';
import type { ManagementStore, PodsView } from './management/index.js';
import { LoadBalancingSettingsSchema } from './load-balancing/options.js';
import {
  DEFAULT_RATE_LIMITS,
  DEFAULT_REQUESTS_PER_WORKER,
  RATE_LIMITED_OPERATIONS,
  RATE_WINDOW_MS,
  type OperationLimit,
  type RateLimitedOperation,
} from './http/rate-limit/limits.js';
import { DashboardSettingsSchema } from './dashboard/settings.js';
import { DEFAULT_WEBHOOK_SETTINGS } from './webhooks/webhook-sender.js';
import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from './http/connection-limits.js';
import type { WorkerApiOptions } from './worker-api/index.js';
import type { EndpointInputSpec } from './openapi/index.js';

/** Worker API settings the server passes through (the harness and the key are the server's own). */
export type WorkerApiPassThrough = Omit<WorkerApiOptions, 'harness' | 'apiKey'>;

const positiveInt = (name: string, max: number) =>
  z
    .number({ error: `${name} must be a whole number` })
    .int({ error: `${name} must be a whole number` })
    .min(1, {
      error: `${name} must be from 1 to ${max}`,
    })
    .max(max, { error: `${name} must be from 1 to ${max}` });

const OperationLimitSchema = z.object({
  perWindow: positiveInt('perWindow', 1_000_000).optional(),
  concurrent: z.union([positiveInt('concurrent', 1_000_000), z.null()]).optional(),
});

export const RateLimitSettingsSchema = z.object({
  /** requests_per_worker of spec 8.2; default 100 per window. */
  requestsPerWorker: z.number().int().min(0).max(1_000_000).default(DEFAULT_REQUESTS_PER_WORKER),
  /** Window length, ms; default 10 000 (spec 8.2). Tests lengthen it so that no window ends mid-test. */
  windowMs: z.number().int().min(1).max(86_400_000).default(RATE_WINDOW_MS),
  /** Per-operation overrides of the spec 8.2 table; default none. */
  limits: z.partialRecord(z.enum(RATE_LIMITED_OPERATIONS), OperationLimitSchema).default({}),
  /** Time source for the windows, epoch ms; default the harness's clock. */
  now: z.custom<() => number>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
});

export const WebhookSettingsSchema = z.object({
  /** Wait between attempts, ms; default 10 000 (spec 6). */
  retryDelayMs: z.number().int().min(0).max(3_600_000).default(DEFAULT_WEBHOOK_SETTINGS.retryDelayMs),
  /** Attempts in all; default 3 (spec 6: 2 more after the first). */
  attempts: z.number().int().min(1).max(100).default(DEFAULT_WEBHOOK_SETTINGS.attempts),
  /** Time one attempt may take, ms; default 10 000. */
  timeoutMs: z.number().int().min(1).max(600_000).default(DEFAULT_WEBHOOK_SETTINGS.timeoutMs),
  /**
   * Targets a webhook may reach beyond the default policy (net/target-policy.ts): CIDR
   * ranges, addresses, or `loopback`, `link-local`, `metadata`. The harness itself is never
   * reached. Default none: link-local and metadata refused, loopback allowed only when the
   * harness listens on loopback.
   */
  allow: AllowListSchema.default([]),
});

const ManagementSettingsSchema = z.object({
  /** Default a fresh InMemoryManagementStore. */
  store: z
    .custom<ManagementStore>((value) => typeof (value as { createTemplate?: unknown } | null)?.createTemplate === 'function', {
      error: 'must be a ManagementStore',
    })
    .optional(),
  /** Default: the workers the job harness has seen, as pods. */
  podsView: z
    .custom<PodsView>((value) => typeof (value as { listPods?: unknown } | null)?.listPods === 'function', {
      error: 'must be a PodsView',
    })
    .optional(),
});

export const HarnessServerOptionsSchema = z.object({
  /** The job store every route works on. Required. */
  harness: z.custom<Harness>((value) => value instanceof Harness, { error: 'must be a Harness' }),
  /** Address to listen on; default 127.0.0.1. */
  host: z.string().min(1).default('127.0.0.1'),
  /** Port; default 8000; 0 picks a free one (read it from `url`). */
  port: z.number().int().min(0).max(65_535).default(8000),
  /** When set, every route needs `Authorization: Bearer <key>` (or the bare key); default none. */
  apiKey: z.string().min(1, { error: 'must not be empty' }).optional(),
  /** Listen on a non-loopback address with no API key; default false (refused with SW_INSECURE_BIND). */
  allowUnauthenticatedNonLoopback: z.boolean().default(false),
  /** Spec 8.2 rate limits; default on with the spec's table; `false` turns them off. */
  rateLimits: z.union([z.literal(false), RateLimitSettingsSchema]).default(() => RateLimitSettingsSchema.parse({})),
  /** Webhook delivery; defaults as on the platform (3 attempts, 10 s apart). */
  webhook: WebhookSettingsSchema.default(() => WebhookSettingsSchema.parse({})),
  /**
   * Most client connections open at once; one past it is closed at once. Default: the
   * process's descriptor limit less a quarter of it (at least 128 kept) for outgoing
   * calls, the database, workers and files (http/connection-limits.ts).
   */
  maxConnections: z.number().int().min(1).max(10_000_000).optional(),
  /** Time for a request's headers to arrive (an idle new connection too), ms; then 400 and closed. Default 10 000. */
  headersTimeoutMs: z.number().int().min(100).max(3_600_000).default(DEFAULT_HEADERS_TIMEOUT_MS),
  /** Time for a whole request, body included, to arrive, ms; then 400 and closed. Not the answer's time. Default 60 000. */
  requestTimeoutMs: z.number().int().min(100).max(3_600_000).default(DEFAULT_REQUEST_TIMEOUT_MS),
  /** Longest an OpenAI-compatible call waits for its job, ms; default 600 000 (then cancelled, 504). */
  openaiTimeoutMs: z.number().int().min(1).max(EXECUTION_TIMEOUT_MS.max).default(EXECUTION_TIMEOUT_MS.default),
  /** How long GET /stream waits for a chunk when none is unread, ms; default 10 000 (per call: ?wait=). */
  streamWaitMs: z.number().int().min(0).max(RUNSYNC_WAIT_MS.max).default(10_000),
  /** The management API under /v1; default on with an in-memory store; `false` leaves it out. */
  management: z.union([z.literal(false), ManagementSettingsSchema]).default({}),
  /**
   * Settings of the worker API under /v2 (long poll, liveness, body limit, events); see
   * worker-api/options.ts. Default its own defaults. Its API key is the server's.
   */
  /** Load-balancing endpoints: requestTimeoutMs (330 000, then 524), pingIntervalMs (1 000), pingTimeoutMs, forgetAfterMs. */
  loadBalancing: LoadBalancingSettingsSchema.default(() => LoadBalancingSettingsSchema.parse({})),
  workerApi: z
    .custom<WorkerApiPassThrough>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
      error: 'must be an object of worker API settings',
    })
    .default({}),
  /** The web dashboard at /ui (ui/settings.ts); default on; `false` leaves it out. */
  dashboard: z.union([z.literal(false), DashboardSettingsSchema]).default(() => DashboardSettingsSchema.parse({})),
  /** Logger for the server and its requests; default silent. */
  logger: z
    .custom<Logger>((value) => typeof (value as { child?: unknown } | null)?.child === 'function', {
      error: 'must be a pino logger',
    })
    .optional(),
  /**
   * Serve this endpoint's queue API at the root too (`/run`, `/runsync`, `/status/:id`,
   * `/stream/:id`, `/cancel/:id`, `/health`, ...), as well as under /v2/<id>; default
   * none (`--serve-api` sets its endpoint).
   */
  rootEndpoint: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,128}$/, { error: 'must be an endpoint id' })
    .optional(),
  /**
   * Per endpoint id: `jsonSchema` of job input for /openapi.json, and `check`, run on
   * /run and /runsync input, throwing SW_INPUT_VALIDATION (400) for input it refuses.
   * Default none: any input is accepted (as on the platform) and documented as any object.
   */
  endpointInputs: z
    .record(
      z.string(),
      z.custom<EndpointInputSpec>((value) => typeof value === 'object' && value !== null, { error: 'must be { jsonSchema?, check? }' }),
    )
    .default({}),
  /**
   * Workers the harness runs itself (a Launcher, harness/launcher): /health counts,
   * GET /logs, the /v1 pods and the dashboard read them. Default none: the workers that
   * joined over the worker API.
   */
  launchedWorkers: z
    .custom<LaunchedWorkersView>((value) => typeof (value as { pods?: unknown } | null)?.pods === 'function', {
      error: 'must be a LaunchedWorkersView (a Launcher)',
    })
    .optional(),
  /** Registry served at /metrics and counted into; default a fresh createMetrics(). */
  metrics: z
    .custom<Metrics>((value) => typeof (value as { text?: unknown } | null)?.text === 'function', {
      error: 'must come from createMetrics()',
    })
    .optional(),
});

/** Options as a caller writes them. */
export type HarnessServerOptions = z.input<typeof HarnessServerOptionsSchema>;
/** Options validated, defaults applied, frozen. */
export type HarnessServerConfig = Readonly<z.output<typeof HarnessServerOptionsSchema>>;

export function resolveServerOptions(options: HarnessServerOptions): HarnessServerConfig {
  const config = parseOnceOrThrow(HarnessServerOptionsSchema, options, 'SW_INVALID_OPTIONS', 'harness server options');
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ServerlessWorkerError(
      'SW_INVALID_OPTIONS',
      `Invalid harness server options: headersTimeoutMs (${config.headersTimeoutMs}) must not be longer than requestTimeoutMs (${config.requestTimeoutMs})`,
      { issues: [{ path: 'headersTimeoutMs', message: `must be at most requestTimeoutMs (${config.requestTimeoutMs})` }] },
    );
  }
  return Object.freeze(config);
}

/** The spec 8.2 table with the configured overrides applied. */
export function rateLimitTable(
  overrides: Partial<Record<RateLimitedOperation, { perWindow?: number | undefined; concurrent?: number | null | undefined }>>,
): Readonly<Record<RateLimitedOperation, OperationLimit>> {
  const table = {} as Record<RateLimitedOperation, OperationLimit>;
  for (const operation of RATE_LIMITED_OPERATIONS) {
    const base = DEFAULT_RATE_LIMITS[operation];
    const override = overrides[operation];
    table[operation] = {
      perWindow: override?.perWindow ?? base.perWindow,
      concurrent: override?.concurrent === undefined ? base.concurrent : override.concurrent,
    };
  }
  return Object.freeze(table);
}
