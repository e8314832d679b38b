/**
 * @module worker/options
 * Options of `serve(handler, options)`, validated once at start and then frozen.
 * An invalid option throws SW_INVALID_OPTIONS naming the option, what it expects and
 * what it got.
 */
import type { Logger } from 'pino';
import * as z from 'zod';
import { EXECUTION_TIMEOUT_MS, MAX_CHUNK_BYTES, ServerlessWorkerError, parseOnceOrThrow } from '../job/index.js';
import { PlatformTransportSettingsSchema } from '../transports/platform/options.js';
import { DEFAULT_INIT_TIMEOUT_MS, type InitFunction } from './init/init-types.js';
import { didYouMean } from './closest-name.js';
import { GPU_EXPECTATIONS } from '../settings/worker-env.js';

/** What a concurrency function sees: jobs running now and the limit in force. */
export interface ConcurrencyState {
  readonly running: number;
  readonly current: number;
}
/** Re-evaluated each time a job ends; answers the new limit (at least 1). */
export type ConcurrencyFunction = (state: ConcurrencyState) => number;

const isFunction = (value: unknown): boolean => typeof value === 'function';

// Strict: an unknown option (a typo, another SDK's name) is refused, see resolveOptions.
export const ServeOptionsSchema = z.strictObject({
  /** Jobs at once: a number (default 1) or a function of the current load. */
  concurrency: z
    .union([
      z.number().int().min(1).max(10_000),
      z.custom<ConcurrencyFunction>(isFunction, { error: 'must be a whole number from 1 to 10000 or a function' }),
    ], { error: 'concurrency must be a whole number from 1 to 10000 or a function' })
    .default(1),
  /** A streamed job's final output is the list of its yielded values (true) or empty (false, default). */
  aggregateStream: z.boolean().default(false),
  /** Execution timeout when the job's policy has none, ms; default 600 000. */
  defaultExecutionTimeoutMs: z.number().int().min(100).max(EXECUTION_TIMEOUT_MS.max).default(EXECUTION_TIMEOUT_MS.default),
  /** How long an aborted handler may take to stop before the worker declares it unresponsive and exits, ms; default 5 000. */
  timeoutGraceMs: z.number().int().min(0).max(600_000).default(5_000),
  /** On SIGTERM/SIGINT, how long running jobs may take to finish before they are aborted, ms; default 30 000. */
  shutdownTimeoutMs: z.number().int().min(0).max(3_600_000).default(30_000),
  /** Ask the platform to replace this worker after every job (stopPod); default false. */
  refreshWorker: z.boolean().default(false),
  /** A zod schema for job.input; bad input fails the job before the handler runs. Default none. */
  inputSchema: z
    .custom<z.ZodType>((value) => typeof (value as { safeParse?: unknown } | null)?.safeParse === 'function', {
      error: 'must be a zod schema',
    })
    .optional(),
  /** The logger; default the package's pino logger (JSON on the platform or off a TTY). */
  logger: z.custom<Logger>((value) => typeof (value as { child?: unknown } | null)?.child === 'function', {
    error: 'must be a pino logger',
  }).optional(),
  /** Worker id; default RUNPOD_POD_ID, else a random id. */
  workerId: z.string().min(1).optional(),
  /** Endpoint id used locally (dry run, --serve-api); default `local`. */
  endpointId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1-64 letters, digits, - or _' }).default('local'),
  /** Read GPU utilisation (nvidia-smi, rocm-smi) while jobs run, for the job-finished log line and metrics; default true. Costs nothing once no GPU tool is found. */
  gpuSampling: z.boolean().default(true),
  /** Time between GPU reads while jobs run, ms; default 5 000. */
  gpuSampleIntervalMs: z.number().int().min(100).max(600_000).default(5_000),
  /**
   * On the platform, the GPU the image needs before it takes jobs: when none answers,
   * the worker reports unhealthy through the heartbeat and exits. `auto` (default)
   * expects NVIDIA when NVIDIA_VISIBLE_DEVICES is set, AMD when HIP_/ROCR_VISIBLE_DEVICES
   * is, nothing otherwise. Env SERVERLESS_WORKER_EXPECT_GPU overrides.
   */
  expectGpu: z.enum(GPU_EXPECTATIONS, { error: `expectGpu must be one of ${GPU_EXPECTATIONS.join(', ')}` }).default('auto'),
  /** On the platform, serve Prometheus /metrics on this port; default off. Env SERVERLESS_WORKER_METRICS_PORT overrides. */
  metricsPort: z.number().int().min(0).max(65_535).optional(),
  /** Address for metricsPort; default 0.0.0.0 (scrapable from outside the container). */
  metricsHost: z.string().min(1).default('0.0.0.0'),
  /**
   * Settings of the platform transport (on the platform only): pollTimeoutMs (90 000),
   * resultDeadlineMs (300 000: how long a result or chunk post is retried), requestTimeoutMs
   * (30 000), retryMinDelayMs / retryMaxDelayMs (250 / 15 000), closeDrainMs (10 000), ...
   * Default: the transport's defaults.
   */
  platformTransport: PlatformTransportSettingsSchema.optional(),
  /** Largest serialized output of one stream chunk, bytes; default 1 MiB (lower only to test). */
  maxChunkBytes: z.number().int().min(64).max(MAX_CHUNK_BYTES).default(MAX_CHUNK_BYTES),
  /**
   * While a stream chunk is being posted, join the plain string yields that follow into
   * one chunk (up to maxChunkBytes) instead of posting one chunk per yield. Nothing is
   * held back: a yield that finds no post in flight is posted at once. The joined text
   * is the same, in order; chunk boundaries are not (a chunk may hold several yields).
   * Yields of other values, or wrapped by withMetrics, keep their own chunks. Default
   * true; false posts one chunk per yield.
   */
  coalesceStreamChunks: z.boolean().default(true),
  /**
   * The start-up phase: run once before the first job is taken; its value is every
   * job's `ctx.state`. Gets `{signal, deadline, log, workerId}`. Default none.
   */
  init: z.custom<InitFunction<unknown>>(isFunction, { error: 'init must be a function' }).optional(),
  /** Bound of `init`, ms; past it the worker reports itself unhealthy and exits 1. Default 600 000. */
  initTimeoutMs: z.number().int().min(1).max(3_600_000).default(DEFAULT_INIT_TIMEOUT_MS),
  /**
   * A watchdog thread times out a job whose handler blocks the event loop past its
   * execution timeout plus timeoutGraceMs: it reports the job TIMED_OUT (the other
   * running jobs FAILED SW_WORKER_SHUTDOWN) and ends the process with exit code 1, so
   * that the worker is replaced. Default true.
   */
  deadlineWatchdog: z.boolean().default(true),
  /**
   * On the platform, while the event loop has been blocked longer than this, the
   * heartbeat stops listing the worker's jobs, so that the platform requeues them; ms,
   * default 3 ping intervals (30 s at the platform's 10 s), at least 10 000.
   */
  eventLoopBlockedMs: z.number().int().min(100).max(86_400_000).optional(),
  /**
   * One info log line per finished job (`job finished`, with its id and duration).
   * Default false: that line is at debug (LOG_LEVEL=debug shows it) and one info line
   * per `jobSummaryIntervalMs` sums up the jobs that ended. A failed or timed-out job is
   * a warning line with its job id either way. The dry run always logs its one job.
   */
  logEveryJob: z.boolean().default(false),
  /** Time between two job summary lines (when logEveryJob is off), ms; default 60 000. */
  jobSummaryIntervalMs: z.number().int().min(100).max(86_400_000).default(60_000),
});

/** Options as a worker author writes them. */
export type ServeOptions<Input = Record<string, unknown>, State = undefined> = Omit<z.input<typeof ServeOptionsSchema>, 'inputSchema' | 'init'> & {
  inputSchema?: z.ZodType<Input>;
  /** The start-up phase; what it returns is `ctx.state` of every job. */
  init?: InitFunction<State>;
};
/** Options validated, defaults applied, frozen. */
export type WorkerConfig = Readonly<z.output<typeof ServeOptionsSchema>>;

/** Refuse options the schema does not know, naming the closest known one (`returnAggregateStream` -> `aggregateStream`). */
function refuseUnknownOptions(options: unknown): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return;
  const known = Object.keys(ServeOptionsSchema.shape);
  const unknown = Object.keys(options).filter((key) => !known.includes(key));
  const transport = (options as { platformTransport?: unknown }).platformTransport;
  if (typeof transport === 'object' && transport !== null) {
    const settings = Object.keys(PlatformTransportSettingsSchema.shape);
    const bad = Object.keys(transport).filter((key) => !settings.includes(key));
    if (bad.length > 0) {
      const names = bad.map((key) => `platformTransport.${key}${didYouMean(key, settings)}`).join('; ');
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `Unknown serve() option ${names}`, { unknown: bad });
    }
  }
  if (unknown.length === 0) return;
  const names = unknown.map((key) => `${key}${didYouMean(key, known)}`).join('; ');
  throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `Unknown serve() option ${names} (the README lists every option)`, { unknown });
}

/** Validate and freeze the options; throws SW_INVALID_OPTIONS (an unknown option too). */
export function resolveOptions(options: unknown = {}): WorkerConfig {
  refuseUnknownOptions(options);
  return Object.freeze(parseOnceOrThrow(ServeOptionsSchema, options ?? {}, 'SW_INVALID_OPTIONS', 'serve() options'));
}

/** The concurrency limit now: the number, or the function's answer (at least 1). */
export function currentConcurrency(config: WorkerConfig, state: ConcurrencyState): number {
  const { concurrency } = config;
  if (typeof concurrency === 'number') return concurrency;
  let limit: number;
  try {
    limit = concurrency(state);
  } catch {
    return Math.max(1, state.current);
  }
  return Number.isFinite(limit) ? Math.max(1, Math.floor(limit)) : Math.max(1, state.current);
}
