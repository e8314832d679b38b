/**
 * @module transports/transport
 * The contract between the worker runtime and wherever its jobs come from.
 *
 * Every transport promises:
 * - `take` answers up to `max` jobs, waiting (long poll) until at least one is there
 *   or `signal` aborts; an abort answers []. It never throws for "no job now".
 * - `postChunk` delivers one stream chunk; the runtime calls it for one job at a time
 *   and in order (it waits for each call before the next), so chunks arrive in order.
 * - `postResult` delivers a job's final result. It resolves once the result has
 *   landed; on failure it retries until it lands or its own deadline passes, and
 *   only then rejects: a result is never silently dropped.
 * - `postProgress` shows a running job's progress output; best effort.
 * - `setJobsInProgress` tells the transport which jobs the worker holds, for the
 *   heartbeat (and for `job_in_progress` on take).
 * - `onStop` delivers requests to stop a held job (cancelled, timed out by the
 *   platform, expired), which the runtime turns into an abort of that job's signal.
 *
 * It leaves out: choosing how many jobs to take (the runtime's concurrency does
 * that), timing jobs out (the runtime and the platform each do), and splitting
 * stream output into chunks (the runtime does, before postChunk).
 */
import type { Job, JobResult, StopReason, StreamChunk } from '../job/index.js';

export type { StopReason } from '../job/index.js';

export interface TakeRequest {
  /** Most jobs to answer; at least 1. */
  max: number;
  /** Whether the worker holds any job now (sent as job_in_progress on the platform). */
  inProgress: boolean;
  /** Aborts the long poll. */
  signal: AbortSignal;
}

export interface PostResultOptions {
  /** The final post of a streaming job. */
  isStream: boolean;
  /** Ask the platform to recycle this worker after this job. */
  stopPod: boolean;
}

export type StopListener = (jobId: string, reason: StopReason) => void;

export interface Transport {
  /** `in-process`, `platform`, ... for logs. */
  readonly kind: string;
  /** This worker's id as the platform knows it. */
  readonly workerId: string;
  take(request: TakeRequest): Promise<Job[]>;
  postChunk(jobId: string, chunk: StreamChunk): Promise<void>;
  postProgress(jobId: string, output: unknown): Promise<void>;
  postResult(jobId: string, result: JobResult, options: PostResultOptions): Promise<void>;
  setJobsInProgress(jobIds: readonly string[]): void;
  onStop(listener: StopListener): () => void;
  /** Report a failed start-up check once (platform: ping with status=unhealthy). */
  reportUnhealthy?(check: string, reason: string): Promise<void>;
  /** Stop background work (heartbeat, stop polling) and release connections. */
  close(): Promise<void>;
}
