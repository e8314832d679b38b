/**
 * @module load-balancing/lb-options
 * Options of `serveLoadBalancing` and the variables it reads, validated once. The
 * platform sets PORT and PORT_HEALTH; they win over the options, as the other
 * SERVERLESS_WORKER_* variables do.
 */
import type { Logger } from 'pino';
import * as z from 'zod';
import { ServerlessWorkerError, parseOrThrow } from '../job/index.js';
import { didYouMean } from '../worker/closest-name.js';
import { DEFAULT_INIT_TIMEOUT_MS } from '../worker/init/init-types.js';
import { GPU_EXPECTATIONS, WORKER_ENV, workerEnvSchema } from '../settings/worker-env.js';

const isFunction = (value: unknown): boolean => typeof value === 'function';
const portNumber = z.number().int().min(0).max(65_535);

// Each option's README words are in its .meta() (settings/option-table.ts); its default and range are the schema's.
// The one-line doc comments are what an editor shows on hover (z.input keeps them).
export const LoadBalancingOptionsSchema = z.object({
  /** `(state) => app`: the author's HTTP app, built once init has succeeded. Required. */
  app: z.custom<(state: unknown) => unknown>(isFunction, { error: 'app must be a function (state) => request listener, fastify instance or { fetch }' }).meta({
    defaultText: 'required',
    values: 'a function `(state) => app`',
    description:
      "The author's HTTP app, built once `init` has succeeded: a `node:http` request listener, a fastify instance or an object with `fetch(Request)`.",
  }),
  /** The start-up phase (as serve's); its value is handed to `app`. Default none. */
  init: z.custom<(ctx: never) => unknown>(isFunction, { error: 'init must be a function' }).optional().meta({
    values: 'a function `async ({ signal, deadline, log, workerId }) => state`',
    description: "The start-up phase, as `serve`'s; its value is handed to `app`.",
  }),
  /** Bound of init, ms; default 600 000. */
  initTimeoutMs: z.number().int().min(1).max(3_600_000).default(DEFAULT_INIT_TIMEOUT_MS).meta({ description: 'Bound of `init`, ms.' }),
  /** The app's port when PORT is not set; default 80 (the platform's default). */
  port: portNumber.default(80).meta({ description: "The app's port when `PORT` is not set (the default is the platform's); `0` picks a free one." }),
  /** The /ping port when PORT_HEALTH is not set; default the app's port (one server). 0: a free port of its own, apart from the app's. */
  healthPort: portNumber.optional().meta({
    defaultText: "the app's port (one server)",
    description: "The `/ping` port when `PORT_HEALTH` is not set; `0`: a free port of its own, apart from the app's.",
  }),
  /** Address to listen on; default 0.0.0.0 (reachable from outside the container). Env SERVERLESS_WORKER_HOST overrides. */
  host: z.string().min(1).default('0.0.0.0').meta({
    env: WORKER_ENV.host.name,
    description: 'Address to listen on (`0.0.0.0`: reachable from outside the container). The variable overrides the option.',
  }),
  /** On SIGTERM, how long requests in flight may take to finish, ms; default 30 000. */
  shutdownTimeoutMs: z
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .default(30_000)
    .meta({ description: 'On SIGTERM, how long requests in flight may take to finish, ms.' }),
  /** After SIGTERM during init, how long init may take to stop, ms; default 5 000. */
  timeoutGraceMs: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(5_000)
    .meta({ description: 'After SIGTERM during `init`, how long `init` may take to stop, ms.' }),
  /** After a failed start-up, how long /ping answers 503 before the process exits 1, ms; default 10 000. */
  failureExitDelayMs: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(10_000)
    .meta({ description: 'After a failed start-up, how long `/ping` answers 503 before the process exits 1, ms.' }),
  /** Requests at once this worker takes from a local harness (announced at registration); default 100. */
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(100)
    .meta({ description: 'Requests at once this worker takes from a local harness (announced at registration).' }),
  /** As serve's expectGpu: the start-up GPU check; default auto. Env SERVERLESS_WORKER_EXPECT_GPU overrides. */
  expectGpu: z
    .enum(GPU_EXPECTATIONS, { error: `expectGpu must be one of ${GPU_EXPECTATIONS.join(', ')}` })
    .default('auto')
    .meta({ env: WORKER_ENV.expectGpu.name, description: "The start-up GPU check, as `serve`'s `expectGpu`. The variable overrides the option." }),
  /** Serve Prometheus /metrics on this port; default off. Env SERVERLESS_WORKER_METRICS_PORT overrides. */
  metricsPort: portNumber.optional().meta({
    env: WORKER_ENV.metricsPort.name,
    defaultText: 'off',
    description: 'Serve Prometheus `/metrics` on this port. The variable overrides the option.',
  }),
  /** Address for metricsPort; default 0.0.0.0. */
  metricsHost: z
    .string()
    .min(1)
    .default('0.0.0.0')
    .meta({ env: WORKER_ENV.metricsHost.name, description: 'Address for `metricsPort`. The variable overrides the option.' }),
  /** The logger; default the package's pino logger. */
  logger: z
    .custom<Logger>((value) => typeof (value as { child?: unknown } | null)?.child === 'function', { error: 'must be a pino logger' })
    .optional()
    .meta({ defaultText: "the package's pino logger", values: 'a pino logger', description: 'The logger the worker logs to.' }),
  /** Worker id; default RUNPOD_POD_ID, else a random id. */
  workerId: z.string().min(1).optional().meta({ defaultText: '`RUNPOD_POD_ID`, else random', description: "This worker's id." }),
});

export type LoadBalancingConfig = Readonly<z.output<typeof LoadBalancingOptionsSchema>>;

/**
 * Validate and freeze the options; throws SW_INVALID_OPTIONS naming the bad one. An
 * option the schema does not know is refused with the closest known name, as serve()
 * does (`pingPort` -> `healthPort`): a misspelt option would otherwise be dropped and its
 * default used without a word.
 */
export function resolveLbOptions(options: unknown): LoadBalancingConfig {
  if (typeof options === 'object' && options !== null && !Array.isArray(options)) {
    const known = Object.keys(LoadBalancingOptionsSchema.shape);
    const unknown = Object.keys(options).filter((key) => !known.includes(key));
    if (unknown.length > 0) {
      const names = unknown.map((key) => `${key}${didYouMean(key, known)}`).join('; ');
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `Unknown serveLoadBalancing() option ${names} (docs/reference/options.md lists every option)`, {
        unknown,
      });
    }
  }
  return Object.freeze(parseOrThrow(LoadBalancingOptionsSchema, options, 'SW_INVALID_OPTIONS', 'serveLoadBalancing() options'));
}

const port = z
  .string()
  .regex(/^\d{1,5}$/, { error: 'must be a port number from 0 to 65535' })
  .transform(Number)
  .refine((value) => value <= 65_535, { error: 'must be a port number from 0 to 65535' });

const LbEnvSchema = workerEnvSchema('harnessUrl', 'host', 'advertiseHost').extend({
  PORT: port.optional(),
  PORT_HEALTH: port.optional(),
  RUNPOD_ENDPOINT_ID: z.string().min(1).optional(),
  RUNPOD_AI_API_KEY: z.string().min(1).optional(),
  RUNPOD_POD_ID: z.string().min(1).optional(),
});

export interface LbEnv {
  /** Address to listen on. */
  readonly host: string;
  readonly port: number;
  readonly healthPort: number;
  /** One server for both: PORT_HEALTH unset, or equal to a non-zero PORT. /ping is answered by the app's server before the app sees it. */
  readonly sharedPort: boolean;
  readonly harnessUrl: string | undefined;
  readonly advertiseHost: string;
  readonly endpointId: string;
  readonly apiKey: string | undefined;
  readonly podId: string | undefined;
}

/** Resolve the ports and the harness registration; throws SW_INVALID_ENV naming a bad variable. */
export function resolveLbEnv(config: LoadBalancingConfig, env: NodeJS.ProcessEnv): LbEnv {
  const parsed = parseOrThrow(LbEnvSchema, env, 'SW_INVALID_ENV', 'environment');
  const appPort = parsed.PORT ?? config.port;
  const givenHealthPort = parsed.PORT_HEALTH ?? config.healthPort;
  const healthPort = givenHealthPort ?? appPort;
  return {
    host: parsed.SERVERLESS_WORKER_HOST ?? config.host,
    port: appPort,
    healthPort,
    // PORT_HEALTH unset, or the same fixed port: one server. PORT_HEALTH=0 asks for a port of its own (a free one), even with PORT=0.
    sharedPort: givenHealthPort === undefined || (healthPort === appPort && appPort !== 0),
    harnessUrl: parsed.SERVERLESS_WORKER_HARNESS_URL,
    advertiseHost: parsed.SERVERLESS_WORKER_ADVERTISE_HOST ?? '127.0.0.1',
    endpointId: parsed.RUNPOD_ENDPOINT_ID ?? 'local',
    apiKey: parsed.RUNPOD_AI_API_KEY,
    podId: parsed.RUNPOD_POD_ID,
  };
}
