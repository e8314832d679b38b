/**
 * @module worker/job-run
 * One job through the handler: input validation, the execution timeout, abort on
 * cancel or shutdown, streaming through the chunker in order, and the final result.
 *
 * Each way a run can end is its own promise and they race (the pattern of execa's
 * terminate/): the handler settling, or the signal aborting. After an abort the
 * handler gets `timeoutGraceMs` to stop; if it does not, the run is reported
 * `unresponsive` and the worker stops taking jobs and exits. The grace counts only the
 * handler's own time: stream chunks it made before it stopped are posted after it, and
 * always before the result.
 */
import type { Logger } from 'pino';
import { withinTime, type Clock } from '../clock/index.js';
import { ServerlessWorkerError, formatIssues, summarizeIssues, type Job, type JobResult, type StopReason, type StreamChunk } from '../job/index.js';
import type { ResultReceipt, Transport } from '../transports/index.js';
import { chunkPosterFor, type ChunkPoster } from './chunk-poster.js';
import { toErrorPayload, type ErrorOrigin } from './error-payload.js';
import { isStreamingValue, type Handler, type JobContext } from './handler.js';
import type { WorkerConfig } from './options.js';
import { toJsonForm } from './serializable-check.js';
import { splitYield } from './stream-chunker.js';
import { unwrapMetrics } from './stream-metrics.js';
import { abortError } from './stop-error.js';

/**
 * How a run ended, as the platform took it: `refused` when it did not accept the
 * result (it refused the post and its error replacement, or had already ended the job
 * another way), `stale_attempt` when the result belongs to an attempt the platform has
 * since replaced, `undelivered` when no post landed before the delivery deadline.
 */
export type RunEnd = 'completed' | 'failed' | 'timed_out' | 'cancelled' | 'expired' | 'shutdown' | 'refused' | 'stale_attempt' | 'undelivered';

export interface RunOutcome {
  readonly end: RunEnd;
  /** The handler kept running past its abort plus the grace period. */
  readonly unresponsive: boolean;
  /** The result posted (none for cancelled or expired jobs: the platform dropped them). */
  readonly result?: JobResult;
  /** Chunks posted for a streaming job. */
  readonly chunks: number;
  /** Serialized bytes of those chunks' outputs. */
  readonly streamBytes: number;
  readonly durationMs: number;
}

export interface JobRunDeps {
  readonly handler: Handler<unknown>;
  readonly config: WorkerConfig;
  readonly transport: Transport;
  readonly logger: Logger;
  readonly origin: ErrorOrigin;
  /** The execution timeout, the grace after an abort and the run's duration. */
  readonly clock: Clock;
}

const GRACE_EXPIRED = Symbol('grace-expired');
const HANDLER_STOPPED = Symbol('handler-stopped');

export class JobRun {
  readonly job: Job;
  readonly deadline: number;
  readonly #deps: JobRunDeps;
  readonly #timeoutMs: number;
  // Made on first use: most handlers never read ctx.signal or ctx.log, and a controller
  // and a pino child per job were a measurable share of a no-op job's cost.
  #controller: AbortController | undefined;
  #logger: Logger | undefined;
  #abortReason: StopReason | 'shutdown' | undefined;
  #abortCause: ServerlessWorkerError | undefined;
  #wakeAborted: (() => void) | undefined;
  #finished = false;
  /** The handler's result promise (a plain handler) or its generator's pending next() (a streaming one). */
  #inHandler: Promise<unknown> | undefined;
  #poster: ChunkPoster | undefined;
  #chunks = 0;
  #streamBytes = 0;

  constructor(job: Job, deps: JobRunDeps) {
    this.job = job;
    this.#deps = deps;
    this.#timeoutMs = job.policy?.executionTimeout ?? deps.config.defaultExecutionTimeoutMs;
    this.deadline = deps.clock.now() + this.#timeoutMs;
  }

  /** The job's signal, aborted with the coded error of the first abort. */
  get #signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortCause !== undefined) this.#controller.abort(this.#abortCause);
    }
    return this.#controller.signal;
  }

  /** The pino child logger bound to the job id. */
  get #log(): Logger {
    return (this.#logger ??= this.#deps.logger.child({ requestId: this.job.id }));
  }

  /** Stop the job: its signal aborts with the reason's coded error. The first reason wins. */
  abort(reason: StopReason | 'shutdown'): void {
    if (this.#abortReason !== undefined || this.#finished) return;
    this.#abortReason = reason;
    this.#abortCause = abortError(reason, this.job, this.#timeoutMs);
    this.#controller?.abort(this.#abortCause);
    this.#wakeAborted?.();
  }

  get aborted(): boolean {
    return this.#abortReason !== undefined;
  }

  /**
   * Run the handler, post the result, and answer how it ended. Never rejects.
   * `onSettled` is called once the handler has settled (or was given up on: then
   * `unresponsive` is true) and the result stands, before it is posted: the deadline
   * watchdog stops watching the job then, so a slow result post can never turn a
   * finished job into a TIMED_OUT one, and the runtime may free the job's slot while
   * its result is posted (worker-runtime.ts).
   */
  async run(onSettled?: (unresponsive: boolean) => void): Promise<RunOutcome> {
    const clock = this.#deps.clock;
    const startedAt = clock.now();
    const timer = clock.setTimer(this.#timeoutMs, () => this.abort('timeout'), { keepAlive: true });
    const work = this.#execute();
    // The handler's result, or undefined once the run is aborted: one promise per run
    // rather than an abort promise, its then() and a Promise.race.
    let result = await new Promise<JobResult | undefined>((resolve) => {
      if (this.#abortReason !== undefined) resolve(undefined);
      else this.#wakeAborted = () => resolve(undefined);
      void work.then(resolve);
    });
    let unresponsive = false;
    if (result === undefined || this.#abortReason !== undefined) {
      // The grace is the handler's to stop in: chunks it already made are still posted
      // after it (a slow platform is not an unresponsive handler), and before the result.
      const settled = await withinTime(
        this.#handlerStopped(work).then(() => HANDLER_STOPPED),
        this.#deps.config.timeoutGraceMs,
        GRACE_EXPIRED,
        clock,
        false,
      );
      unresponsive = settled === GRACE_EXPIRED;
      if (unresponsive) await this.#poster?.flush().catch(() => undefined);
      else await work;
      result = this.#abortedResult(unresponsive);
    }
    timer.cancel();
    this.#finished = true;
    onSettled?.(unresponsive);
    let end = this.#endOf(result);
    if (result !== undefined) {
      const taken = await this.#post(result, unresponsive);
      if (taken !== undefined) ({ end, result } = taken);
    }
    return { end, unresponsive, chunks: this.#chunks, streamBytes: this.#streamBytes, durationMs: clock.now() - startedAt, ...(result ? { result } : {}) };
  }

  #context(): JobContext {
    // The getters below read the run's fields: they need the run, not the context object.
    // oxlint-disable-next-line typescript/no-this-alias
    const run = this;
    return {
      jobId: this.job.id,
      workerId: this.#deps.origin.workerId,
      get signal() {
        return run.#signal;
      },
      deadline: this.deadline,
      get log() {
        return run.#log;
      },
      progress: (value: unknown) => {
        if (this.#finished) {
          this.#log.warn('ctx.progress() called after the job ended; ignored');
          return;
        }
        // As JSON, the way the platform path posts it; a value that cannot be is dropped
        // with a warning there too (its post's JSON.stringify throws).
        let progress: unknown;
        try {
          progress = toJsonForm(value, 'progress', 'Progress').value;
        } catch (error) {
          this.#log.warn({ err: error }, 'progress update not JSON; ignored');
          return;
        }
        this.#deps.transport.postProgress(this.job.id, progress, this.job.attempt).catch((error: unknown) => {
          this.#log.warn({ err: error }, 'progress update failed');
        });
      },
      // Set by bindState when serve has an init (worker/init/bind-state.ts).
      state: undefined,
    };
  }

  /** The handler's result as a JobResult; every failure is caught here. */
  async #execute(): Promise<JobResult> {
    try {
      let input: unknown = this.job.input;
      const schema = this.#deps.config.inputSchema;
      if (schema) {
        const parsed = schema.safeParse(input, { reportInput: true });
        if (!parsed.success) {
          const issues = summarizeIssues(parsed.error);
          throw new ServerlessWorkerError('SW_INPUT_VALIDATION', `Invalid job input: ${formatIssues(issues)}`, { issues });
        }
        input = parsed.data;
      }
      const value = this.#deps.handler({ ...this.job, input }, this.#context());
      if (isStreamingValue(value)) return await this.#stream(value);
      this.#inHandler = Promise.resolve(value);
      const output: unknown = await value;
      // The result as the JSON the platform path posts, turned back into a plain value:
      // every transport then carries the same thing (worker/serializable-check.ts).
      return { kind: 'output', output: toJsonForm(output, 'output', 'Handler output').value };
    } catch (error) {
      return { kind: 'error', error: toErrorPayload(error, this.#deps.origin) };
    }
  }

  async #stream(source: AsyncIterable<unknown> | Iterable<unknown>): Promise<JobResult> {
    const { transport, config } = this.#deps;
    const poster = chunkPosterFor(transport, this.job, config.coalesceStreamChunks ? config.maxChunkBytes : 0);
    this.#poster = poster;
    const iterator: AsyncIterator<unknown> | Iterator<unknown> = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
    const aggregate: unknown[] | undefined = config.aggregateStream ? [] : undefined;
    let failure: unknown;
    try {
      while (this.#abortReason === undefined) {
        const next = Promise.resolve(iterator.next());
        this.#inHandler = next;
        const step = await next;
        this.#inHandler = undefined;
        if (step.done) break;
        // coalesceStreamChunks: a string joins the chunk still waiting behind a post in flight.
        if (typeof step.value === 'string' && poster.tryAppend(step.value)) {
          this.#streamBytes += Buffer.byteLength(step.value);
          if (aggregate) aggregate.push(step.value);
          continue;
        }
        const chunks = splitYield(step.value, this.#chunks, { maxChunkBytes: config.maxChunkBytes });
        this.#chunks += chunks.length;
        const joinable = chunks.length === 1 && typeof step.value === 'string';
        const ownMetrics = unwrapMetrics(step.value).metrics !== undefined;
        for (const made of chunks) {
          // Each chunk as the JSON its post carries: a value that fit, and the handler's
          // metrics, are still the handler's own objects (a text part is JSON already).
          const chunk = typeof made.output === 'string' && !ownMetrics ? made : asJson(made);
          this.#streamBytes += outputBytes(chunk.output);
          await poster.push(chunk, joinable);
        }
        if (aggregate) aggregate.push(aggregateValue(step.value));
      }
    } catch (error) {
      failure = error;
    }
    if (this.#abortReason !== undefined) void Promise.resolve(iterator.return?.()).catch(() => {});
    // The final result goes after every chunk: wait for the queue to drain first.
    try {
      await poster.flush();
    } catch (error) {
      failure ??= error;
    }
    if (failure !== undefined) throw failure;
    return { kind: 'output', output: aggregate === undefined ? undefined : toJsonForm(aggregate, 'output', 'Aggregated stream output').value };
  }

  /** Settles once the handler has given control back: its promise settled, or its generator's pending step did (none pending: at once). */
  #handlerStopped(work: Promise<JobResult>): Promise<unknown> {
    const inHandler = this.#inHandler;
    // Before the handler was even called (input validation), `work` is all there is.
    if (inHandler === undefined) return this.#poster !== undefined ? Promise.resolve() : work;
    return inHandler.then(
      () => undefined,
      () => undefined,
    );
  }

  #abortedResult(unresponsive: boolean): JobResult | undefined {
    const reason = this.#abortReason;
    if (reason === 'cancelled' || reason === 'expired' || reason === undefined) return undefined;
    const error = toErrorPayload(this.#abortCause, this.#deps.origin);
    if (unresponsive) {
      error.error_message += `; the handler ignored its abort signal for ${this.#deps.config.timeoutGraceMs} ms, so this worker stops taking jobs and exits`;
    }
    return reason === 'timeout' ? { kind: 'error', error, timedOut: true } : { kind: 'error', error };
  }

  #endOf(result: JobResult | undefined): RunEnd {
    if (this.#abortReason === 'cancelled' || this.#abortReason === 'expired') return this.#abortReason;
    if (this.#abortReason === 'shutdown') return 'shutdown';
    if (result?.kind === 'output') return 'completed';
    return result?.kind === 'error' && result.timedOut ? 'timed_out' : 'failed';
  }

  /**
   * Post the result. Answers undefined when the platform applied it, else the end and
   * the result that stands: a result too large to post, or refused with a 4xx retrying
   * cannot fix, is replaced by a small error result (the job ends FAILED with the reason).
   */
  async #post(result: JobResult, unresponsive: boolean): Promise<{ end: RunEnd; result: JobResult } | undefined> {
    const { transport, config } = this.#deps;
    const options = {
      isStream: this.#chunks > 0,
      stopPod: config.refreshWorker || unresponsive,
      ...(this.job.attempt !== undefined ? { attempt: this.job.attempt } : {}),
    };
    let replacement: JobResult | undefined;
    try {
      return this.#taken(await transport.postResult(this.job.id, result, options), result);
    } catch (error) {
      replacement = this.#replacementFor(error);
      if (replacement === undefined) return this.#notTaken(error, result);
    }
    this.#log.warn(
      { error: replacement.kind === 'error' ? replacement.error.error_message : undefined },
      'result not posted as it was: posting an error in its place',
    );
    try {
      return this.#taken(await transport.postResult(this.job.id, replacement, options), replacement) ?? { end: 'failed', result: replacement };
    } catch (error) {
      return this.#notTaken(error, replacement);
    }
  }

  #taken(receipt: ResultReceipt | void, result: JobResult): { end: RunEnd; result: JobResult } | undefined {
    if (!receipt || receipt.applied) return undefined;
    this.#log.warn({ reason: receipt.reason }, 'the platform acknowledged the result but did not apply it: the job had already ended another way');
    return { end: 'refused', result };
  }

  #notTaken(error: unknown, result: JobResult): { end: RunEnd; result: JobResult } {
    if (error instanceof ServerlessWorkerError && error.code === 'SW_STALE_ATTEMPT') {
      this.#log.debug({ err: error }, 'result of a stale attempt refused by the platform; dropped');
      return { end: 'stale_attempt', result };
    }
    const refused = refusedStatus(error) !== undefined;
    // The transport already retried until its deadline: log loudly, it is counted there.
    this.#log.error(
      { err: error },
      refused ? 'the platform refused the result' : 'result could not be delivered; the platform will see the job fail or time out',
    );
    return { end: refused ? 'refused' : 'undelivered', result };
  }

  /** The error result posted in place of one too large to post, or refused with a 4xx; undefined for other failures. */
  #replacementFor(error: unknown): JobResult | undefined {
    if (error instanceof ServerlessWorkerError && error.code === 'SW_RESULT_TOO_LARGE') {
      return { kind: 'error', error: toErrorPayload(error, this.#deps.origin) };
    }
    const status = refusedStatus(error);
    if (status === undefined) return undefined;
    const refused = new ServerlessWorkerError(
      'SW_RESULT_REFUSED',
      `The platform refused the result of job ${this.job.id} with HTTP ${status}; this error was posted in its place (${(error as Error).message.slice(0, 500)})`,
      { jobId: this.job.id, status },
    );
    return { kind: 'error', error: toErrorPayload(refused, this.#deps.origin) };
  }
}

/** The 4xx status (not 408 or 429) with which the platform refused a post, from SW_RESULT_UNDELIVERED; undefined otherwise. */
function refusedStatus(error: unknown): number | undefined {
  if (!(error instanceof ServerlessWorkerError) || error.code !== 'SW_RESULT_UNDELIVERED') return undefined;
  const status = error.details?.lastStatus;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 408 && status !== 429 ? status : undefined;
}

/** A stream chunk as the plain values its post's JSON parses back to. */
function asJson(chunk: StreamChunk): StreamChunk {
  const output = toJsonForm(chunk.output, 'output').value;
  return chunk.metrics === undefined ? { output } : { output, metrics: toJsonForm(chunk.metrics, 'metrics').value as Record<string, unknown> };
}

/** Serialized size of a chunk's output (strings, the common case, without re-serializing). */
function outputBytes(output: unknown): number {
  return typeof output === 'string' ? Buffer.byteLength(output) + 2 : (JSON.stringify(output)?.length ?? 0);
}

/** A yielded value as it appears in an aggregated output (bytes as base64 text). */
function aggregateValue(yielded: unknown): unknown {
  const { value } = unwrapMetrics(yielded);
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (value instanceof ArrayBuffer) return Buffer.from(value).toString('base64');
  return value;
}
