/**
 * @module worker/handler
 * The handler contract: what a worker author writes and what it receives.
 */
import type { Logger } from 'pino';
import type { Job } from '../job/index.js';

/** What a handler receives beside the job; `State` is what serve's `init` returned. */
export interface JobContext<State = undefined> {
  /** The job's id. */
  readonly jobId: string;
  /** This worker's id. */
  readonly workerId: string;
  /**
   * Aborted, with a ServerlessWorkerError as its reason, on cancel
   * (SW_JOB_CANCELLED), ttl expiry (SW_JOB_EXPIRED), execution timeout (SW_EXECUTION_TIMEOUT) and shutdown
   * (SW_WORKER_SHUTDOWN). Pass it to fetch and check it in loops: a handler that
   * ignores it past the grace period makes the worker exit.
   */
  readonly signal: AbortSignal;
  /** Epoch ms at which the job's execution timeout aborts `signal`. */
  readonly deadline: number;
  /** A pino child logger bound to the job id (logged as `requestId`). */
  readonly log: Logger;
  /** Show `value` as the job's output while it runs (best effort; ignored once the job ended). */
  progress(value: unknown): void;
  /** What serve's `init` returned (loaded once, shared by every job); undefined without init. */
  readonly state: State;
}

/** A job as the handler sees it, with its input typed. */
export type HandlerJob<Input> = Job<Input>;

/**
 * A handler: an async or plain function returning the job's output, or an async or
 * plain generator whose every yielded value becomes one or more stream chunks.
 */
export type Handler<Input = Record<string, unknown>, State = undefined> = (job: HandlerJob<Input>, ctx: JobContext<State>) => unknown;

/** A generator object (sync or async) or any async iterable: the handler streams. */
export function isStreamingValue(value: unknown): value is AsyncIterable<unknown> | Iterable<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  if (Symbol.asyncIterator in value) return true;
  // Arrays, Maps, Sets are iterable too but are plain outputs; only generator objects stream.
  return Object.prototype.toString.call(value) === '[object Generator]';
}
