/**
 * @module transports/transport
 * The contract between the worker runtime and wherever its jobs come from.
 *
 * Every transport promises:
 * - `take` answers up to `max` jobs, waiting (long poll) until at least one is there
 *   or `signal` aborts; an abort answers []. It never throws for "no job now".
 * - `postChunk` delivers one stream chunk; the runtime calls it for one job in order,
 *   waiting for each call before the next, so chunks arrive in order; unless the
 *   transport's `chunkWindow` is above 1 (it says the other side orders chunks by their
 *   `stream_index`), when up to that many calls of one job are in flight at once;
 *   `postChunks` delivers several consecutive chunks in one call, where `chunkBatch` says
 *   the other side takes them in one post (our harness).
 * - `postResult` delivers a job's final result. It resolves once the result has
 *   landed, with what the platform made of it (applied, or acknowledged and ignored
 *   because the job already ended another way); on failure it retries until it lands
 *   or its own deadline passes, and only then rejects (SW_RESULT_UNDELIVERED, with
 *   `details.lastStatus` when the platform refused it with a 4xx): a result is never
 *   silently dropped. A result whose JSON is larger than `maxResultBytes` is not posted
 *   at all: it rejects at once with SW_RESULT_TOO_LARGE.
 * - Attempts: a job may carry `attempt` (this project's harness hands one out with each
 *   take). Chunks, progress and the result carry it back (`attempt` below; the
 *   platform transport as `?attempt=N`, which the platform ignores). A post from an
 *   attempt that is no longer the job's current one rejects with SW_STALE_ATTEMPT
 *   (progress: resolves, dropped). Stops name the attempt to stop when the harness knows it.
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
  /** The job's attempt (Job.attempt), sent back so that a stale result is refused; omit when the job had none. */
  attempt?: number;
}

/** What the platform made of a result that landed. */
export interface ResultReceipt {
  /** false: acknowledged but not applied (the job had already ended another way, is gone, or another worker holds it). */
  readonly applied: boolean;
  /** Why it was not applied, as the platform said (`already_ended`, `not_held_by_worker`, `not_found`). */
  readonly reason?: string;
}

/** `attempt`: the attempt to stop; undefined stops every run of the job. */
export type StopListener = (jobId: string, reason: StopReason, attempt?: number) => void;

export interface Transport {
  /** `in-process`, `platform`, ... for logs. */
  readonly kind: string;
  /** This worker's id as the platform knows it. */
  readonly workerId: string;
  /** Largest serialized result body the platform accepts, bytes; undefined: no limit known. */
  readonly maxResultBytes?: number;
  take(request: TakeRequest): Promise<Job[]>;
  postChunk(jobId: string, chunk: StreamChunk, attempt?: number): Promise<void>;
  /**
   * How many postChunk calls of one job the runtime may have in flight at once (read when
   * a stream starts); absent or 1: one at a time. More only where the receiving side
   * stores chunks by `metrics.stream_index` whatever order they arrive in.
   */
  readonly chunkWindow?: number;
  /**
   * Several chunks of one job in one postChunks call (read when a stream starts): at
   * most `perPost` in one call and `inFlight` over all calls in flight. Absent (or
   * postChunks absent): postChunk only. Only where the receiving side takes several
   * chunks in one post, each still its own chunk, and orders them by `stream_index`.
   */
  readonly chunkBatch?: { readonly perPost: number; readonly inFlight: number };
  /** Delivers `chunks` (consecutive, in order) as postChunk would deliver each, in fewer posts; see chunkBatch. */
  postChunks?(jobId: string, chunks: readonly StreamChunk[], attempt?: number): Promise<void>;
  postProgress(jobId: string, output: unknown, attempt?: number): Promise<void>;
  /** Resolves with what the platform made of the result; nothing counts as applied. */
  postResult(jobId: string, result: JobResult, options: PostResultOptions): Promise<ResultReceipt | void>;
  setJobsInProgress(jobIds: readonly string[]): void;
  /** A job this transport's take answered has ended its run (after its result, if any, was posted); optional. */
  runEnded?(job: Job): void;
  onStop(listener: StopListener): () => void;
  /** Report a failed start-up check once (platform: ping with status=unhealthy). */
  reportUnhealthy?(check: string, reason: string): Promise<void>;
  /** Stop background work (heartbeat, stop polling) and release connections. */
  close(): Promise<void>;
}
