/**
 * @module job/job
 * The shapes a job takes once accepted: what a worker receives, what a handler
 * returns, the error payload of a failed job, and the chunks of a stream.
 */
import type { JobStatus } from './states.js';
import type { PolicyInput, S3Config } from './request-schema.js';

/** A job as a transport delivers it to the worker. Unknown keys pass through unchanged. */
export interface Job<Input = Record<string, unknown>> {
  readonly id: string;
  readonly input: Input;
  readonly webhook?: string;
  readonly policy?: PolicyInput;
  readonly s3Config?: S3Config;
  /**
   * Which take of the job this is (1, 2, ...), as this project's harness hands it out;
   * the worker sends it back with progress, chunks and the result so that the harness
   * can refuse posts of an older attempt. The platform sends none (then it is absent).
   */
  readonly attempt?: number;
  readonly [key: string]: unknown;
}

/**
 * The key of one run of a job on a worker: the job id, and its attempt when it has
 * one. Two attempts of one job can run side by side on one worker (attempt 1 still in
 * a handler that ignored its abort, attempt 2 taken after a retry): what a worker
 * keeps per run (its JobRun, progress lane, GPU window) is keyed by this, not the id.
 */
export function runKey(jobId: string, attempt: number | undefined): string {
  return attempt === undefined ? jobId : `${jobId}\u0000${attempt}`;
}

/**
 * The error payload of a FAILED (or TIMED_OUT) job, in the field names of the
 * platform's reference worker so that existing dashboards and clients read it.
 */
export interface JobErrorPayload {
  error_type: string;
  error_message: string;
  error_traceback?: string;
  /** Our stable code (SW_...), when the runtime knows it. */
  error_code?: string;
  hostname: string;
  worker_id: string;
  runtime_version: string;
  /** Zod issues, for SW_INPUT_VALIDATION. */
  issues?: unknown;
}

/** What a worker reports when a job ends. */
export type JobResult =
  | { readonly kind: 'output'; readonly output: unknown }
  | { readonly kind: 'error'; readonly error: JobErrorPayload; readonly timedOut?: boolean };

/** One element of a job's `/stream` array. */
export interface StreamChunk {
  readonly output: unknown;
  readonly metrics?: Readonly<Record<string, unknown>>;
}

/** A job as `/status` shows it. */
export interface JobView {
  id: string;
  status: JobStatus;
  output?: unknown;
  error?: unknown;
  delayTime?: number;
  executionTime?: number;
  retries?: number;
}

/** Why the platform asks a worker to stop a job it holds. */
export type StopReason = 'cancelled' | 'timeout' | 'expired';
