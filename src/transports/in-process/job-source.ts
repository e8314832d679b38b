/**
 * @module transports/in-process/job-source
 * What the in-process transport needs from the harness: the calls of the worker API, made
 * directly. Written here, below the harness, so that transports never import it; the
 * harness's `EndpointJobs` has this shape.
 */
import type { Job, JobResult, JobStatus, StopReason, StreamChunk } from '../../job/index.js';

/** A post's answer: applied, or not and why (`stale_attempt`: from an attempt other than the job's current one). */
export type InProcessPostAck = { readonly applied: true } | { readonly applied: false; readonly reason: string; readonly status?: JobStatus };

/** A result post's answer, with the reasons a worker may be told. */
export type InProcessResultAck =
  | { readonly applied: true }
  | { readonly applied: false; readonly reason: 'not_found' | 'already_ended' | 'not_held_by_worker' | 'stale_attempt'; readonly status?: JobStatus };

/** One endpoint's jobs, as a worker in the same process takes and ends them. */
export interface InProcessJobSource {
  take(workerId: string, max: number, signal?: AbortSignal): Promise<Job[]>;
  postChunk(jobId: string, workerId: string, chunk: StreamChunk, attempt?: number): Promise<InProcessPostAck>;
  progress(jobId: string, workerId: string, output: unknown, attempt?: number): Promise<boolean>;
  complete(jobId: string, workerId: string, result: JobResult, attempt?: number): Promise<InProcessResultAck>;
  /** Records that a stale attempt's post was refused (`what`: 'result', 'stream chunk'). */
  refuseStale(jobId: string, attempt: number | undefined, what: string): Promise<void>;
  readonly workers: {
    touch(workerId: string, touch?: { reportedJobIds?: readonly string[] }): Promise<unknown>;
    remove(workerId: string): Promise<unknown>;
  };
  /** Stop requests for a worker's job; answers the function that removes the listener. */
  readonly stopRequested: { add(listener: (workerId: string, jobId: string, reason: StopReason, attempt: number) => void): () => void };
}
