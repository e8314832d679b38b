/**
 * @module harness/endpoint-types
 * The shapes EndpointJobs takes and answers (options, submit options, result acks,
 * stream reads, health counts) and the /runsync retention rule.
 */
import { RETENTION_MS, type JobStatus, type StreamChunk } from '../job/index.js';
import type { Clock } from './clock.js';

export interface SubmitOptions {
  /** Submitted through /runsync: `sync-` id, retention 1 min (up to 5 min with a longer wait). */
  sync?: boolean;
  /** The /runsync wait, ms: a longer wait keeps the result longer (at most 5 min). */
  waitMs?: number;
}

/**
 * What a result post achieved: applied (`repeated` when the same worker and attempt
 * had already ended the job with it), or not applied, and why: `stale_attempt` when it
 * comes from an attempt other than the job's current one.
 */
export type ResultAck =
  | { applied: true; status: JobStatus; repeated?: true }
  | { applied: false; reason: 'not_found' | 'already_ended' | 'not_held_by_worker' | 'stale_attempt'; status?: JobStatus };

/** What `/stream` reads: the unread chunks, the status, and the attempt and retries that tell a reader the stream restarted. */
export interface StreamRead {
  status: JobStatus;
  stream: StreamChunk[];
  /** The job's current attempt (0 before its first take); chunks carry theirs in `metrics.attempt`. */
  attempt: number;
  /** Times the job went back to the queue. */
  retries: number;
}

export interface HealthCounts {
  jobs: { completed: number; failed: number; inProgress: number; inQueue: number; retried: number };
  workers: { idle: number; running: number };
}

export interface EndpointJobsOptions {
  clock: Clock;
  /** Called with errors thrown by listeners (they never stop the queue). */
  onListenerError?: (error: unknown) => void;
  /** Times a lost job (worker gone, take answer lost) goes back to the queue before it ends FAILED with SW_REQUEUE_LIMIT; default 3. */
  maxRequeues?: number;
}

/** The /runsync wait when none is given, ms (spec 8.1). */
const DEFAULT_SYNC_WAIT_MS = 90_000;

/**
 * Milliseconds a synchronous job is kept after it ends, for a /runsync wait of
 * `waitMs`: 1 min with the default wait (90 s) or a shorter one; with a longer wait,
 * as long as the wait, at most 5 min (spec 8.1).
 */
export function syncRetentionMs(waitMs: number | undefined): number {
  if (waitMs === undefined || waitMs <= DEFAULT_SYNC_WAIT_MS) return RETENTION_MS.sync;
  return Math.min(RETENTION_MS.syncMax, Math.max(RETENTION_MS.sync, waitMs));
}
