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
import { GPU_EXPECTATIONS, WORKER_ENV } from '../settings/worker-env.js';

/** What a concurrency function sees: jobs whose handler holds a slot now (not those posting their result in the background) and the limit in force. */
export interface ConcurrencyState {
  readonly running: number;
  readonly current: number;
}
/** Re-evaluated each time a job ends; answers the new limit (at least 1). */
export type ConcurrencyFunction = (state: ConcurrencyState) => number;

const isFunction = (value: unknown): boolean => typeof value === 'function';

// Strict: an unknown option (a typo, another SDK's name) is refused, see resolveOptions.
// Each option's README words are in its .meta() (settings/option-table.ts); its default and range are the schema's.
// The one-line doc comments are what an editor shows on hover (z.input keeps them).
export const ServeOptionsSchema = z.strictObject({
  /** Jobs at once: a number (default 1) or a function of the current load. */
  concurrency: z
    .union(
      [z.number().int().min(1).max(10_000), z.custom<ConcurrencyFunction>(isFunction, { error: 'must be a whole number from 1 to 10000 or a function' })],
      { error: 'concurrency must be a whole number from 1 to 10000 or a function' },
    )
    .default(1)
    .meta({
      values: '1 to 10000, or a function `({ running, current }) => number`',
      description:
        "Jobs at once: a number, or a function of the current load re-evaluated each time a job ends. Never more handlers run at once than it allows. A job's slot is free once its handler has finished, while its result is still being posted (at most as many such posts as the limit; the job stays in the heartbeat until its post is answered, and a graceful shutdown waits for it). With `refreshWorker` a job keeps its slot until its post is answered.",
    }),
  /** A streamed job's final output is the list of its yielded values (true) or empty (false, default). */
  aggregateStream: z
    .boolean()
    .default(false)
    .meta({ description: "A streamed job's final output is the list of its yielded values (`true`) or empty (`false`)." }),
  /** Execution timeout when the job's policy has none, ms; default 600 000. */
  defaultExecutionTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(EXECUTION_TIMEOUT_MS.max)
    .default(EXECUTION_TIMEOUT_MS.default)
    .meta({ description: 'Execution timeout, ms, for jobs whose policy has none.' }),
  /** How long an aborted handler may take to stop before the worker declares it unresponsive and exits, ms; default 5 000. */
  timeoutGraceMs: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(5_000)
    .meta({ description: 'How long an aborted handler may take to stop before the worker declares it unresponsive and exits, ms.' }),
  /** On SIGTERM/SIGINT, how long running jobs may take to finish before they are aborted, ms; default 30 000. */
  shutdownTimeoutMs: z
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .default(30_000)
    .meta({ description: 'On SIGTERM/SIGINT, how long running jobs may take to finish before they are aborted, ms.' }),
  /** Ask the platform to replace this worker after every job (stopPod); default false. */
  refreshWorker: z.boolean().default(false).meta({ description: 'Ask the platform to replace the worker after every job (`stopPod`).' }),
  /** A zod schema for job.input; bad input fails the job before the handler runs. Default none. */
  inputSchema: z
    .custom<z.ZodType>((value) => typeof (value as { safeParse?: unknown } | null)?.safeParse === 'function', {
      error: 'must be a zod schema',
    })
    .optional()
    .meta({ values: 'a zod schema', description: 'Validates `job.input`: bad input fails the job before the handler runs.' }),
  /** The logger; default the package's pino logger (JSON on the platform or off a TTY). */
  logger: z
    .custom<Logger>((value) => typeof (value as { child?: unknown } | null)?.child === 'function', {
      error: 'must be a pino logger',
    })
    .optional()
    .meta({
      defaultText: "the package's pino logger (JSON on the platform or off a TTY)",
      values: 'a pino logger',
      description: 'The logger the worker and its jobs log to.',
    }),
  /** Worker id; default RUNPOD_POD_ID, else a random id. */
  workerId: z.string().min(1).optional().meta({ defaultText: '`RUNPOD_POD_ID`, else random', description: "This worker's id." }),
  /** Endpoint id used locally (dry run, --serve-api); default `local`. */
  endpointId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1-64 letters, digits, - or _' })
    .default('local')
    .meta({ values: '1-64 letters, digits, `-` or `_`', description: 'The endpoint id used locally (dry run, `--serve-api`).' }),
  /** Read GPU utilisation (nvidia-smi, rocm-smi) while jobs run, for the job-finished log line and metrics; default true. Costs nothing once no GPU tool is found. */
  gpuSampling: z.boolean().default(true).meta({
    description:
      'Read GPU utilisation (nvidia-smi, rocm-smi) while jobs run, for the job-finished log line and metrics. Costs nothing once no GPU tool is found.',
  }),
  /** Time between GPU reads while jobs run, ms; default 5 000. */
  gpuSampleIntervalMs: z.number().int().min(100).max(600_000).default(5_000).meta({ description: 'Time between GPU reads while jobs run, ms.' }),
  expectGpu: z
    .enum(GPU_EXPECTATIONS, { error: `expectGpu must be one of ${GPU_EXPECTATIONS.join(', ')}` })
    .default('auto')
    .meta({
      env: WORKER_ENV.expectGpu.name,
      description:
        'On the platform, the GPU the image needs before it takes jobs: when none answers, the worker reports unhealthy through the heartbeat and exits. `auto` expects NVIDIA when `NVIDIA_VISIBLE_DEVICES` is set, AMD when `HIP_VISIBLE_DEVICES` or `ROCR_VISIBLE_DEVICES` is, nothing otherwise. The variable overrides the option.',
    }),
  /** On the platform, serve Prometheus /metrics on this port; default off. Env SERVERLESS_WORKER_METRICS_PORT overrides. */
  metricsPort: z.number().int().min(0).max(65_535).optional().meta({
    env: WORKER_ENV.metricsPort.name,
    defaultText: 'off',
    description: 'On the platform, serve Prometheus `/metrics` on this port. The variable overrides the option.',
  }),
  /** Address for metricsPort; default 0.0.0.0 (scrapable from outside the container). */
  metricsHost: z.string().min(1).default('0.0.0.0').meta({
    env: WORKER_ENV.metricsHost.name,
    description: 'Address for `metricsPort` (`0.0.0.0`: scrapable from outside the container). The variable overrides the option.',
  }),
  platformTransport: PlatformTransportSettingsSchema.optional().meta({
    defaultText: "the transport's defaults",
    values: 'an object of the settings below',
    description:
      'Settings of the platform transport (on the platform only): polls, posts and their retries, the heartbeat. Each is in the table below; an unknown one is refused.',
  }),
  /** Largest serialized output of one stream chunk, bytes; default 1 MiB (lower only to test). */
  maxChunkBytes: z
    .number()
    .int()
    .min(64)
    .max(MAX_CHUNK_BYTES)
    .default(MAX_CHUNK_BYTES)
    .meta({ description: 'Largest serialized output of one stream chunk, bytes (lower it only to test splitting).' }),
  coalesceStreamChunks: z.boolean().default(true).meta({
    description:
      "While a stream chunk is being posted, join the plain string yields that follow into one chunk (up to `maxChunkBytes`) instead of posting one chunk per yield. Text is never held back to be joined: a yield that finds no post in flight is posted at once, so a slow generator still gets one chunk per yield; a fast one gets fewer, larger chunks (1 000 yields of 1 KiB: 7 posts instead of 1 000, 4.9x the yields/s of one chunk per yield in the same run, see `bench/README.md`). The order and the concatenated text are exact; chunk boundaries are not (a chunk may hold several yields). Yields of other values, and those wrapped by `withMetrics`, keep their own chunks. `false`: one chunk per yield (the default before; for a consumer that needs a yield's boundaries).",
  }),
  /** The start-up phase; what it returns is `ctx.state` of every job. */
  init: z.custom<InitFunction<unknown>>(isFunction, { error: 'init must be a function' }).optional().meta({
    values: 'a function `async ({ signal, deadline, log, workerId }) => state`',
    description: 'The start-up phase: run once before the first job is taken; its value is every job\'s `ctx.state`. See "Start-up phase" above.',
  }),
  /** Bound of `init`, ms; past it the worker reports itself unhealthy and exits 1. Default 600 000. */
  initTimeoutMs: z
    .number()
    .int()
    .min(1)
    .max(3_600_000)
    .default(DEFAULT_INIT_TIMEOUT_MS)
    .meta({ description: 'Bound of `init`, ms; past it the worker reports itself unhealthy (`check=init`) and exits 1.' }),
  deadlineWatchdog: z.boolean().default(true).meta({
    description:
      'A watchdog thread times out a job whose handler blocks the event loop past its execution timeout plus `timeoutGraceMs`: it reports the job `TIMED_OUT` (the other running jobs `FAILED` `SW_WORKER_SHUTDOWN`) and ends the process with exit code 1, so that the worker is replaced (see "Timeouts that really stop work").',
  }),
  eventLoopBlockedMs: z.number().int().min(100).max(86_400_000).optional().meta({
    defaultText: "3 ping intervals (30 s at the platform's 10 s), at least 10 s",
    description:
      "On the platform, while the event loop has been blocked longer than this, ms, the heartbeat stops listing the worker's jobs, so that the platform requeues them.",
  }),
  logEveryJob: z.boolean().default(false).meta({
    description:
      'One info log line per finished job (`job finished`, with `requestId` and `durationMs`). Off: that line is at debug (`LOG_LEVEL=debug` shows it) and one info line per `jobSummaryIntervalMs` sums up the jobs that ended (count by end, jobs/s, mean and longest duration). A failed or timed-out job is a warning line with its `requestId` either way; the dry run always logs its job.',
  }),
  /** On the platform, how long after going quiet the worker compacts its heap, ms; default 30 000; false: never. */
  idleCompactionMs: z
    .union([z.number().int().min(100).max(86_400_000), z.literal(false)], {
      error: 'idleCompactionMs must be a whole number from 100 to 86400000 (ms) or false',
    })
    .default(30_000)
    .meta({
      values: '100 ms to 1 day, or `false`',
      description:
        "On the platform (and as the worker child of `--serve-api`), memory given back once the jobs stop: when no young-generation collection has run for 5.5 s (V8's own timed full collections do not count), the worker collects V8's young generation (which V8 then shrinks), and once it has been quiet this long after that, ms, a full collection gives back the old space a busy spell grew (memory-reducing from Node 22: every page compacted, V8's pooled pages given back). Work during the wait calls it off until the next quiet period: a burst after a memory-reducing collection runs unoptimized while V8 compiles the job's path again, and slower while V8 grows the heap. On Node 24, once start-up's memory is given back, V8's own memory reducer is told to run regular collections, which keep optimized code. `false`: neither (V8's own heuristics alone decide when the heap shrinks).",
    }),
  /** Time between two job summary lines (when logEveryJob is off), ms; default 60 000. */
  jobSummaryIntervalMs: z
    .number()
    .int()
    .min(100)
    .max(86_400_000)
    .default(60_000)
    .meta({ description: 'Time between two job summary lines (with `logEveryJob` off), ms.' }),
});

/** Options as a worker author writes them. */
export type ServeOptions<Input = Record<string, unknown>, State = undefined> = Omit<z.input<typeof ServeOptionsSchema>, 'inputSchema' | 'init'> & {
  /** A zod schema for job.input; bad input fails the job before the handler runs. Default none. */
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
  throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `Unknown serve() option ${names} (docs/reference/options.md lists every option)`, { unknown });
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
