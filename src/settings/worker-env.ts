/**
 * @module settings/worker-env
 * The SERVERLESS_WORKER_* environment variables (and SW_LOG_LEVEL), each declared once: its name, the zod
 * schema that parses it (an environment value is text), the default and what it does.
 * worker/platform-extras.ts, load-balancing/lb-options.ts, `--serve-api` and the
 * `harness` command read them through these entries; the README's table is made from
 * them (scripts/settings-docs.ts).
 */
import * as z from 'zod';

export interface EnvSetting<Schema extends z.ZodType = z.ZodType> {
  readonly name: string;
  /** Parses the variable's text; absent or empty variables are left to the default. */
  readonly schema: Schema;
  /** The README's default column. */
  readonly defaultText: string;
  readonly description: string;
}

// One check on the text, so that the error quotes the value as given (a check after the transform saw a number).
const portText = z
  .string()
  .refine((text) => /^\d{1,5}$/.test(text) && Number(text) <= 65_535, { error: 'must be a port number from 0 to 65535' })
  .transform(Number);

/** The pino levels SW_LOG_LEVEL and `--log-level` take. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The GPU expectations of `expectGpu` and SERVERLESS_WORKER_EXPECT_GPU. */
export const GPU_EXPECTATIONS = ['auto', 'nvidia', 'amd', 'any', 'none'] as const;

/**
 * How long a launched worker whose harness is gone waits for one to come back with its results, ms: longer than a
 * supervisor takes to restart a harness (systemd's and Docker's restart policies wait well under a second, then the
 * harness opens its database in a few seconds), short enough that a worker nobody comes back for does not linger.
 */
export const DEFAULT_HARNESS_RETURN_WAIT_MS = 120_000;

export const WORKER_ENV = {
  apiKey: {
    name: 'SERVERLESS_WORKER_API_KEY',
    schema: z.string().min(1),
    defaultText: 'none',
    description:
      'the API key of `--serve-api` and `serverless-worker harness` when `--api-key` is not given (every route then needs `Authorization: Bearer <key>`); the management CLI sends it too',
  },
  expectGpu: {
    name: 'SERVERLESS_WORKER_EXPECT_GPU',
    schema: z.enum(GPU_EXPECTATIONS, { error: `must be one of ${GPU_EXPECTATIONS.join(', ')}` }),
    defaultText: 'option `expectGpu`, else `auto`',
    description: 'on the platform, the GPU the image needs before it takes jobs (`auto`, `nvidia`, `amd`, `any`, `none`); overrides `expectGpu`',
  },
  metricsPort: {
    name: 'SERVERLESS_WORKER_METRICS_PORT',
    schema: portText,
    defaultText: 'option `metricsPort`, else off',
    description: 'on the platform, serve Prometheus `/metrics` on this port; overrides `metricsPort`',
  },
  logLevel: {
    name: 'SW_LOG_LEVEL',
    // Any case, as pino's own names are matched (INFO is info); empty: unset.
    schema: z
      .string()
      .transform((level) => level.toLowerCase())
      .pipe(z.enum(['', ...LOG_LEVELS], { error: `must be one of ${LOG_LEVELS.join(', ')}` })),
    defaultText: '`$LOG_LEVEL`, else `info`',
    description: 'the log level of the worker in every mode (a bad value stops the start, in the dry run as on the platform); `--log-level` overrides it',
  },
  metricsHost: {
    name: 'SERVERLESS_WORKER_METRICS_HOST',
    schema: z.string().min(1),
    defaultText: 'option `metricsHost`, else `0.0.0.0`',
    description: 'the address of the `/metrics` port',
  },
  host: {
    name: 'SERVERLESS_WORKER_HOST',
    schema: z.string().min(1),
    defaultText: 'option `host`, else `0.0.0.0`',
    description: 'load-balancing worker: the address to listen on',
  },
  harnessUrl: {
    name: 'SERVERLESS_WORKER_HARNESS_URL',
    schema: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
    defaultText: 'none',
    description:
      'load-balancing worker, local only: register with this `serverless-worker harness` (retried until it is up, repeated every 5 s: see Registration)',
  },
  advertiseHost: {
    name: 'SERVERLESS_WORKER_ADVERTISE_HOST',
    schema: z.string().min(1),
    defaultText: '`127.0.0.1`',
    description:
      'load-balancing worker: the host the harness reaches it at (a harness without an API key takes only loopback hosts unless started with `--lb-allow`: see Registration)',
  },
  harnessReturnWaitMs: {
    name: 'SERVERLESS_WORKER_HARNESS_RETURN_WAIT_MS',
    schema: z
      .string()
      .regex(/^\d{1,9}$/, { error: 'must be a whole number of milliseconds from 0 to 86400000' })
      .transform(Number)
      .refine((ms) => ms <= 86_400_000, { error: 'must be a whole number of milliseconds from 0 to 86400000' }),
    defaultText: `\`${DEFAULT_HARNESS_RETURN_WAIT_MS}\` (2 min)`,
    description:
      'a worker a `serverless-worker harness` launched, once that harness is gone (SIGKILLed, crashed): how long, ms, it keeps its unfinished jobs and their results for a harness that comes back on the same address (it takes no new job meanwhile), before it exits and leaves those jobs to be run again; see "Results outlive their harness"',
  },
} as const satisfies Record<string, EnvSetting>;

/** Environment variable read for the API key when `--api-key` is not given. */
export const API_KEY_ENV = WORKER_ENV.apiKey.name;

type WorkerEnvKey = keyof typeof WORKER_ENV;

/** A zod object of the named variables, each optional, keyed by variable name. */
export function workerEnvSchema<Keys extends WorkerEnvKey>(
  ...keys: Keys[]
): z.ZodObject<{ [Key in Keys as (typeof WORKER_ENV)[Key]['name']]: z.ZodOptional<(typeof WORKER_ENV)[Key]['schema']> }> {
  const shape = Object.fromEntries(keys.map((key) => [WORKER_ENV[key].name, WORKER_ENV[key].schema.optional()]));
  return z.object(shape) as never;
}
