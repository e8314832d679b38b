/**
 * @module testing/run-job
 * Run a worker's handler on one job in a test, the way the platform would: the
 * request goes into an in-process harness, the worker (built from the same options
 * the worker passes to `serve()`) takes it through the in-process transport, and the
 * test gets the final record and every stream chunk back. `options.init` runs first, as
 * serve() runs it, unless the test gives the state. Nothing listens on a port,
 * nothing is spawned; each call has its own harness and worker, stopped at the end.
 */
import type { Logger } from 'pino';
import type * as z from 'zod';
import { dryRunRecord, type DryRunRecord } from '../local/dry-run.js';
import { startLocalWorker, type LocalWorker } from '../local/local-worker.js';
import { Harness, type Clock } from '../harness/index.js';
import { parseJobRequest, type JobRequestInput, type JobStatus, type StreamChunk } from '../job/index.js';
import { createLogger } from '../log/index.js';
import { joinChunks } from '../worker/join-chunks.js';
import { startHandler } from '../worker/init/init-phase.js';
import { bindState } from '../worker/init/bind-state.js';
import { resolveOptions, type ServeOptions, type WorkerConfig } from '../worker/options.js';
import type { Handler, HandlerJob, JobContext } from '../worker/handler.js';
import { jobError, type JobErrorInfo } from './job-error.js';

/** Wait for the job far longer than any execution timeout could run (about 24.8 days). */
const WAIT_FOREVER_MS = 2 ** 31 - 1;

export interface RunJobSettings<Input = Record<string, unknown>, State = undefined> {
  /**
   * The worker's options, exactly as passed to `serve(handler, options)` (validated
   * the same way: a bad option throws SW_INVALID_OPTIONS). Default `{}`. Unless set
   * here, `gpuSampling` is off and the logger is silent (`LOG_LEVEL` turns it on).
   * `options.init` runs as serve() runs it (bounded by `initTimeoutMs`), once per call,
   * before the job is submitted; its value is the job's `ctx.state`. A failed or timed-out
   * init rejects with its error (SW_INIT_FAILED with init's error as `cause`, SW_INIT_TIMEOUT).
   */
  options?: ServeOptions<Input, State>;
  /**
   * The job's `ctx.state`, given instead of running `options.init` (a fake model, or one
   * loaded once in `before()` and shared by many tests). When set (not undefined),
   * `options.init` does not run.
   */
  state?: State;
  /**
   * The one time source of the harness and the worker: ttl, retention and queue timers,
   * the execution timeout and its grace. Default the system clock (which fake timers,
   * `vi.useFakeTimers()` or node:test `mock.timers`, move); a `ManualClock` moves only
   * when told (`clock.advance(ms)`).
   */
  clock?: Clock;
}

/** A job request as test_input.json holds it (`{ input, policy?, webhook?, s3Config? }`), its input typed as the handler takes it. */
export type TestJobRequest<Input> = Omit<JobRequestInput, 'input'> & { readonly input: Input };

/**
 * The request a test passes: a value typed `unknown` (read from test_input.json) goes as it
 * is, checked when the job is submitted; anything else must be a TestJobRequest of the
 * handler's input, so `{ input: { prompt: 1 } }` does not compile against a handler of
 * `{ prompt: string }`.
 */
export type RequestFor<Input, Given> = unknown extends Given ? Given : TestJobRequest<Input>;

/**
 * The input a request carries for a handler of `Input`: `Raw`, what the options' inputSchema
 * takes, when its type is known (a schema with defaults takes less than the handler gets);
 * every field optional, each of its type, when the schema's input type is not known (options
 * typed `ServeOptions<Input>`: a default may fill any field); else `Input`.
 */
export type RequestInputOf<Input, Raw> = unknown extends Raw ? Partial<Input> : Raw;

/** The settings, with what the options' inputSchema takes (`Raw`) read from its type. */
export type RunJobSettingsOf<Input, State, Raw> = RunJobSettings<Input, State> & {
  readonly options?: { readonly inputSchema?: z.ZodType<Input, Raw> };
};

/** A handler's return type as what it streams: the yield type of its generator (or async iterable); never for a plain handler. */
export type YieldOf<Return> = Return extends AsyncIterable<infer Item> ? Item : Return extends Generator<infer Item, unknown, unknown> ? Item : never;

/**
 * What a handler's return type makes `output`: its resolved value for a plain handler; for a
 * streaming one the list of its yields (`aggregateStream`; else no output). Values go through
 * JSON on their way (a Date becomes its ISO text), as on the platform.
 */
export type OutputOf<Return> = [YieldOf<Return>] extends [never] ? Awaited<Return> : YieldOf<Return>[];

/** What a test gets back: the job as `/status` shows it, plus its stream. `Return`: the handler's return type. */
export interface TestJobResult<Return = unknown> {
  readonly id: string;
  readonly status: JobStatus;
  /** The handler's return value (COMPLETED), or the aggregated stream when `aggregateStream`. */
  readonly output?: OutputOf<Return>;
  /**
   * The job's structured error (FAILED, TIMED_OUT): `error_type`, `error_message`, `error_code`, ...
   * An object here and in the dry run; `/runsync` and `/status` give it as a JSON string (the
   * platform's shape): `jobError(answer)` reads either.
   */
  readonly error?: JobErrorInfo;
  /** Every stream chunk `{ output, metrics }` as `/stream` would give it, in order. */
  readonly chunks: readonly StreamChunk[];
  /** The yielded values, rejoined from the chunks (`joinChunks`): what the handler yielded, as JSON made it. */
  readonly values: readonly ([YieldOf<Return>] extends [never] ? unknown : YieldOf<Return>)[];
  /** The final record, as the dry run prints it. */
  readonly record: DryRunRecord;
  /** The worker's exit code after the job: 1 when the handler ignored its abort (the worker would be replaced). */
  readonly workerExitCode: number;
}

/** A running job: its chunks as they arrive, and the final result. */
export interface TestJobStream<Return = unknown> extends AsyncIterable<StreamChunk> {
  /** Resolves when the job has ended and the worker stopped. */
  readonly result: Promise<TestJobResult<Return>>;
}

function quietLogger(options: ServeOptions<unknown, unknown>): Logger {
  return options.logger ?? createLogger({ level: process.env.LOG_LEVEL ?? 'silent' });
}

/**
 * The handler as serve() would run it: with the caller's `state` bound, else after
 * `config.init` (the same start-up phase as serve(), without its signal listeners: a
 * test runner's SIGINT is not the worker's). Rejects with init's error when it fails.
 */
async function handlerWithState(
  handler: Handler<unknown, unknown>,
  config: WorkerConfig,
  settings: { state?: unknown; clock?: Clock },
): Promise<Handler<unknown>> {
  if (settings.state !== undefined) return bindState(handler, settings.state);
  const started = await startHandler(handler, config, config.logger as Logger, {
    workerId: config.workerId ?? 'local',
    signals: false,
    errorInLog: false,
    ...(settings.clock ? { clock: settings.clock } : {}),
  });
  if (started.ok) return started.handler;
  throw started.outcome.ok ? new Error('init failed') : started.outcome.error;
}

/**
 * Start one job and give its chunks as they arrive (`for await`) and its `result`.
 * The request is a job request as in test_input.json: `{ input, policy?, webhook?, s3Config? }`,
 * its input typed from the handler (a value typed `unknown` is checked at run time only).
 */
export function streamJob<Input, State = undefined, Return = unknown, Raw = Input, Given = TestJobRequest<Input>>(
  handler: (job: HandlerJob<Input>, ctx: JobContext<State>) => Return,
  request: RequestFor<RequestInputOf<NoInfer<Input>, NoInfer<Raw>>, Given>,
  settings: RunJobSettingsOf<Input, State, Raw> = {},
): TestJobStream<Return> {
  const options = (settings.options ?? {}) as ServeOptions<unknown, unknown>;
  const config = resolveOptions({ gpuSampling: false, ...options, logger: quietLogger(options) });
  const jobRequest = parseJobRequest(request);
  const harness = new Harness(settings.clock ? { clock: settings.clock } : {});
  const endpoint = harness.endpoint(config.endpointId);
  let local: LocalWorker | undefined;

  const chunks: StreamChunk[] = [];
  let delivered = 0;
  let ended = false;
  let wake: (() => void) | undefined;
  /** Reads one after the other, so that chunks keep their order. */
  let reading = Promise.resolve();
  const collect = (id: string): Promise<void> => {
    reading = reading.then(async () => {
      if (!(await endpoint.find(id))) return;
      chunks.push(...(await endpoint.readStream(id)).stream);
      wake?.();
    });
    const read = reading;
    // A failed read (the job vanished meanwhile) does not stop the later ones.
    reading = reading.catch(() => {});
    return read;
  };

  const result = (async (): Promise<TestJobResult<Return>> => {
    let unsubscribe = (): void => {};
    let stopped = false;
    try {
      // init first, as serve() runs it: no job is submitted until it ends.
      const ready = await handlerWithState(handler as Handler<unknown, unknown>, config, settings);
      local = startLocalWorker(ready, config, config.logger as Logger, harness);
      // Chunks wait in the store until read: none is lost before the subscription.
      const { id } = await endpoint.submit(jobRequest);
      unsubscribe = endpoint.onJobChange(id, () => void collect(id).catch(() => {}));
      const view = await endpoint.waitForEnd(id, WAIT_FOREVER_MS);
      await collect(id);
      stopped = true;
      const exit = await local.stop();
      const record = dryRunRecord(view);
      const error = jobError(record);
      // The types are the handler's (OutputOf, YieldOf): the values are what it returned and yielded, through JSON.
      return {
        id,
        status: view.status,
        ...(record.output !== undefined ? { output: record.output as OutputOf<Return> } : {}),
        ...(error !== undefined ? { error } : {}),
        chunks,
        values: joinChunks(chunks) as TestJobResult<Return>['values'],
        record,
        workerExitCode: exit.exitCode,
      };
    } finally {
      unsubscribe();
      // A submission the harness refused (or any failure before the end): the worker still stops.
      if (!stopped) await local?.stop().catch(() => {});
      await harness.close();
      ended = true;
      wake?.();
    }
  })();
  // A test that only iterates still sees a failure through the iterator.
  result.catch(() => {});

  return {
    result,
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (delivered < chunks.length) yield chunks[delivered++] as StreamChunk;
        if (ended) {
          await result;
          return;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (delivered < chunks.length || ended) resolve();
        });
        wake = undefined;
      }
    },
  };
}

/**
 * Run one job through the worker and resolve with its final record and its chunks.
 * The request is a job request as in test_input.json: `{ input, policy?, webhook?, s3Config? }`;
 * a malformed one rejects with SW_INVALID_JOB_REQUEST, bad options with SW_INVALID_OPTIONS.
 */
export async function runJob<Input, State = undefined, Return = unknown, Raw = Input, Given = TestJobRequest<Input>>(
  handler: (job: HandlerJob<Input>, ctx: JobContext<State>) => Return,
  request: RequestFor<RequestInputOf<NoInfer<Input>, NoInfer<Raw>>, Given>,
  settings: RunJobSettingsOf<Input, State, Raw> = {},
): Promise<TestJobResult<Return>> {
  return await streamJob<Input, State, Return, Raw, Given>(handler, request, settings).result;
}
