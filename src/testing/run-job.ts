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
import { dryRunRecord, type DryRunRecord } from '../local/dry-run.js';
import { startLocalWorker, type LocalWorker } from '../local/local-worker.js';
import { Harness, type Clock } from '../harness/index.js';
import { parseJobRequest, type JobStatus, type StreamChunk } from '../job/index.js';
import { createLogger } from '../log/index.js';
import { joinChunks } from '../worker/join-chunks.js';
import { startHandler } from '../worker/init/init-phase.js';
import { bindState } from '../worker/init/bind-state.js';
import { resolveOptions, type ServeOptions, type WorkerConfig } from '../worker/options.js';
import type { Handler } from '../worker/handler.js';

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

/** What a test gets back: the job as `/status` shows it, plus its stream. */
export interface TestJobResult {
  readonly id: string;
  readonly status: JobStatus;
  /** The handler's return value (COMPLETED), or the aggregated stream when `aggregateStream`. */
  readonly output?: unknown;
  /** The job's structured error (FAILED, TIMED_OUT): `error_type`, `error_message`, `error_code`, ... */
  readonly error?: unknown;
  /** Every stream chunk `{ output, metrics }` as `/stream` would give it, in order. */
  readonly chunks: readonly StreamChunk[];
  /** The yielded values, rejoined from the chunks (`joinChunks`). */
  readonly values: readonly unknown[];
  /** The final record, as the dry run prints it. */
  readonly record: DryRunRecord;
  /** The worker's exit code after the job: 1 when the handler ignored its abort (the worker would be replaced). */
  readonly workerExitCode: number;
}

/** A running job: its chunks as they arrive, and the final result. */
export interface TestJobStream extends AsyncIterable<StreamChunk> {
  /** Resolves when the job has ended and the worker stopped. */
  readonly result: Promise<TestJobResult>;
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
 * The request is a job request as in test_input.json: `{ input, policy?, webhook?, s3Config? }`.
 */
export function streamJob<Input, State = undefined>(
  handler: Handler<Input, State>,
  request: unknown,
  settings: RunJobSettings<Input, State> = {},
): TestJobStream {
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

  const result = (async (): Promise<TestJobResult> => {
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
      return {
        id,
        status: view.status,
        ...(record.output !== undefined ? { output: record.output } : {}),
        ...(record.error !== undefined ? { error: record.error } : {}),
        chunks,
        values: joinChunks(chunks),
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
export async function runJob<Input, State = undefined>(
  handler: Handler<Input, State>,
  request: unknown,
  settings: RunJobSettings<Input, State> = {},
): Promise<TestJobResult> {
  return await streamJob(handler, request, settings).result;
}
