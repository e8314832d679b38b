/**
 * @module harness/job-record
 * The harness's record of one job and the public view of it that `/status` shows.
 */
import type { Job, JobErrorPayload, JobRequest, JobStatus, JobView, StreamChunk } from '../job/index.js';
import type { TimerHandle } from './clock.js';

export interface JobRecord {
  readonly id: string;
  readonly endpointId: string;
  readonly request: JobRequest;
  /** Submitted through /runsync: shorter retention, `sync-` id. */
  readonly sync: boolean;
  status: JobStatus;
  readonly submittedAt: number;
  /** When the job last entered the queue (submission, retry or requeue). */
  queuedAt: number;
  startedAt?: number;
  endedAt?: number;
  /** Worker holding the job while IN_PROGRESS. */
  workerId?: string;
  /** Final output, or progress output while running. */
  output?: unknown;
  error?: JobErrorPayload;
  /** Times the job went back to the queue (retry or a lost worker). */
  retries: number;
  /**
   * The current attempt: 0 until a worker first takes the job, then one more on each
   * take. Workers send it back with progress, chunks and the result; the harness
   * accepts those only from the current attempt (attempts.ts).
   */
  attempt: number;
  /** Times the job was lost (its worker gone, its take answer lost) since it was submitted or retried: capped (maxRequeues). */
  lost: number;
  /** The worker and attempt whose result ended the job, so that a repeat of that post is recognised as the same result. */
  resultFrom?: { readonly workerId: string | undefined; readonly attempt: number };
  /** Chunks not yet read through /stream. */
  unreadChunks: StreamChunk[];
  /** Chunks posted so far, read or not. */
  chunkCount: number;
  /** Absolute time the ttl deletes the job. */
  expiresAt: number;
  /** How long the job is kept once it ends. */
  retentionMs: number;
  timers: { ttl?: TimerHandle; execution?: TimerHandle; retention?: TimerHandle };
}

/** Error text in the platform's form: the error payload as JSON text. */
export function errorText(error: JobErrorPayload): string {
  return JSON.stringify(error);
}

/** The job as `/status` shows it. */
export function toJobView(job: JobRecord): JobView {
  const view: JobView = { id: job.id, status: job.status };
  if (job.startedAt !== undefined) view.delayTime = Math.max(0, job.startedAt - job.queuedAt);
  if (job.endedAt !== undefined && job.startedAt !== undefined) view.executionTime = Math.max(0, job.endedAt - job.startedAt);
  if (job.output !== undefined) view.output = job.output;
  if (job.error !== undefined) view.error = errorText(job.error);
  if (job.retries > 0) view.retries = job.retries;
  return view;
}

/** A new record for a job submitted at `now`: IN_QUEUE, attempt 0, no timers yet. */
export function newJobRecord(fields: Pick<JobRecord, 'id' | 'endpointId' | 'request' | 'sync' | 'expiresAt' | 'retentionMs'>, now: number): JobRecord {
  return { ...fields, status: 'IN_QUEUE', submittedAt: now, queuedAt: now, retries: 0, attempt: 0, lost: 0, unreadChunks: [], chunkCount: 0, timers: {} };
}

/** What the worker receives: the request's fields, unchanged, with the job id and the attempt (the worker sends it back). */
export function toDelivery(job: Pick<JobRecord, 'id' | 'request' | 'attempt'>): Job {
  const { input, webhook, webhookV2, policy, s3Config } = job.request;
  return {
    id: job.id,
    input,
    attempt: job.attempt,
    ...(policy !== undefined ? { policy } : {}),
    ...(webhook !== undefined ? { webhook } : {}),
    ...(webhookV2 !== undefined ? { webhookV2 } : {}),
    ...(s3Config !== undefined ? { s3Config } : {}),
  };
}
