/**
 * @module harness/store/store-types
 * The records and call shapes of the job store contract (job-store.ts): what a store
 * answers (StoredJob, StoredWorker, acks, pages, counts) and what its changing calls
 * report (ChangeOutcome: jobs ended, stops ordered).
 */
import type { JobErrorPayload, JobRequest, JobStatus, StopReason, StreamChunk } from '../../job/index.js';

// ------------------------------------------------------------------ records

/**
 * One job as the store keeps it (what the harness once called JobRecord): plain data,
 * a copy. Chunks are kept apart and read through `readStream` / `peekStream`.
 */
export interface StoredJob {
  readonly id: string;
  readonly endpointId: string;
  readonly request: JobRequest;
  /** Submitted through /runsync: shorter retention, `sync-` id. */
  readonly sync: boolean;
  readonly status: JobStatus;
  readonly submittedAt: number;
  /** When the job last entered the queue (submission, retry or requeue). */
  readonly queuedAt: number;
  /** When the current attempt was taken; absent while IN_QUEUE. */
  readonly startedAt?: number;
  /** When the job ended; absent unless it ended after a start (a job cancelled in the queue has none). */
  readonly endedAt?: number;
  /** Worker holding the job while IN_PROGRESS. */
  readonly workerId?: string;
  /** Final output, or the latest progress output while running. */
  readonly output?: unknown;
  readonly error?: JobErrorPayload;
  /** Times the job went back to the queue (retry or a lost worker). */
  readonly retries: number;
  /** 0 until a worker first takes the job, then one more on each take (attempts.ts). */
  readonly attempt: number;
  /** Times the job was lost since it was submitted or retried (capped by maxRequeues). */
  readonly lost: number;
  /** The worker and attempt whose result ended the job: a repeat of that post answers `repeated`. */
  readonly resultFrom?: { readonly workerId: string | undefined; readonly attempt: number };
  /** The worker that held the job when a cancel ended it (a cancelled running job keeps who ran it; its stop and any later post are as before). */
  readonly cancelledFrom?: string;
  /** Chunks posted during the current attempt, read or not. */
  readonly chunkCount: number;
  /** Chunks not yet handed out by `readStream`. */
  readonly unreadChunkCount: number;
  /** The ttl deadline: at this time the job is deleted, in any state. */
  readonly expiresAt: number;
  /** While IN_PROGRESS: when the current attempt times out (startedAt + execution timeout). */
  readonly executionDeadline?: number;
  /** The execution timeout the current attempt runs under, ms (the job's policy, else the endpoint's, else the spec's). */
  readonly executionTimeoutMs?: number;
  /** How long the job is kept once it ends, ms. */
  readonly retentionMs: number;
  /** Once ended: when retention deletes it (endedAt, or the time it ended, + retentionMs). */
  readonly deleteAt?: number;
  /** While IN_PROGRESS: when its worker's heartbeat last listed it (touchWorker's `reportedJobIds`). */
  readonly reportedAt?: number;
}

/** A worker the store has heard of on one endpoint. */
export interface StoredWorker {
  readonly endpointId: string;
  readonly id: string;
  readonly firstSeenAt: number;
  readonly lastSeenAt: number;
  /** Jobs it holds now (IN_PROGRESS with its id), in the order it took them. */
  readonly jobIds: readonly string[];
  /** Heard from (a heartbeat) but has not asked for a job yet: its start-up phase runs. */
  readonly initializing: boolean;
  /**
   * The worker sends heartbeats (it reached a harness over HTTP): `sweepSilentWorkers`
   * declares it gone when silent. In-process workers do not, and are never swept.
   */
  readonly heartbeats: boolean;
  /** Ping interval the worker reported or was configured with, ms. */
  readonly pingIntervalMs?: number;
}

/** Per-endpoint settings the store needs to apply its rules. */
export interface EndpointSettings {
  /** Execution timeout of jobs whose policy sets none, ms; undefined: the spec's 600 000. */
  readonly defaultExecutionTimeoutMs?: number | undefined;
}

// ------------------------------------------------------------------ call shapes

export interface SubmitOptions {
  /** Submitted through /runsync: `sync-` id, retention 1 min (up to 5 min with a longer wait). */
  readonly sync?: boolean;
  /** The /runsync wait, ms: a longer wait keeps the result longer (at most 5 min). */
  readonly waitMs?: number;
  /** The request's size as received, bytes (the HTTP body); counted by queuedBytes while the job is queued. Default 0. */
  readonly bytes?: number;
  /** The new job's id, made by the caller with newJobId (job-id.ts) so that it can listen for the job's events before the submit; default a new one. */
  readonly id?: string;
  /** A taker of the submitting process is waiting for a job now (a wake-up hint for other processes: StoreEvent 'queued'). */
  readonly takerWaiting?: boolean;
}

/** A worker must stop this attempt of a job it holds. */
export interface StopOrder {
  readonly endpointId: string;
  readonly workerId: string;
  readonly jobId: string;
  readonly reason: StopReason;
  readonly attempt: number;
}

/**
 * What a changing call did besides its answer: the jobs it ended (the caller fires
 * `jobEnded` for each: webhooks, metrics) and the stops it ordered (also published as
 * 'stop' events; listed here for the caller's logs and tests).
 */
export interface ChangeOutcome {
  /** Jobs that reached a terminal status in this call, as they ended. */
  readonly ended: readonly StoredJob[];
  readonly stops: readonly StopOrder[];
}

/**
 * What a result post achieved: applied (`repeated` when the same worker and attempt
 * had already ended the job with it), or not applied, and why: `stale_attempt` when it
 * comes from an attempt other than the job's current one.
 */
export type ResultAck =
  | { readonly applied: true; readonly status: JobStatus; readonly repeated?: true }
  | {
      readonly applied: false;
      readonly reason: 'not_found' | 'already_ended' | 'not_held_by_worker' | 'stale_attempt';
      readonly status?: JobStatus;
    };

/** Why a progress post or a chunk was not applied (undefined reason: applied). */
export type PostAck =
  | { readonly applied: true }
  | { readonly applied: false; readonly reason: 'not_found' | 'not_held_by_worker' | 'stale_attempt' | 'duplicate'; readonly status?: JobStatus }
  /**
   * A chunk whose `metrics.stream_index` is past the next one the job expects (`expected`,
   * its chunk count this attempt): stored only once those before it are (EndpointJobs
   * holds it until then, or answers this when it is too far ahead to hold).
   */
  | { readonly applied: false; readonly reason: 'ahead'; readonly status: JobStatus; readonly expected: number };

/** What `/stream` reads: the unread chunks, the status, and the attempt and retries that tell a reader the stream restarted. */
export interface StreamRead {
  readonly status: JobStatus;
  readonly stream: StreamChunk[];
  /** The job's current attempt (0 before its first take); chunks carry theirs in `metrics.attempt`. */
  readonly attempt: number;
  /** Times the job went back to the queue. */
  readonly retries: number;
}

export interface HealthCounts {
  readonly jobs: { readonly completed: number; readonly failed: number; readonly inProgress: number; readonly inQueue: number; readonly retried: number };
  readonly workers: { readonly idle: number; readonly running: number };
}

/** Jobs kept per status, and all of them (the dashboard's endpoint row). */
export type StateCounts = Readonly<Record<JobStatus, number>> & { readonly retained: number };

export type ListOrder = 'newest' | 'oldest' | 'slowest' | 'waited';

export interface ListQuery {
  /** Only these states; default all. */
  readonly states?: readonly JobStatus[] | undefined;
  /** Only ids containing this text, case-insensitive (an exact id is found at once); default all. */
  readonly search?: string | undefined;
  /** History filters (history-filter.ts): only jobs this worker ran (holder, or the one whose result ended it). */
  readonly workerId?: string | undefined;
  /** Only jobs submitted this way. */
  readonly kind?: 'run' | 'runsync' | undefined;
  /** Only jobs whose error's error_code begins with this (SW_HANDLER matches SW_HANDLER_ERROR; a whole code matches itself). */
  readonly errorCode?: string | undefined;
  /** Only jobs submitted at or after this time (epoch ms), and before `submittedTo`. */
  readonly submittedFrom?: number | undefined;
  readonly submittedTo?: number | undefined;
  /** Only jobs whose input, output or error (as JSON text: an error's message and type) contains this text, case-insensitive. */
  readonly text?: string | undefined;
  /**
   * Order of the page; default newest submission first. `slowest`: longest execution
   * first (jobs not ended last); `waited`: longest queue wait first (jobs not started
   * last); ties newest first.
   */
  readonly order?: ListOrder | undefined;
  readonly offset: number;
  readonly limit: number;
}

export interface ListPage {
  /** Jobs matching the filter (all of them, not only this page). */
  readonly total: number;
  /** The page, newest submission first. */
  readonly jobs: readonly StoredJob[];
}

export interface TouchWorker {
  /** The worker's heartbeat listed these jobs as running: their `reportedAt` becomes now. */
  readonly reportedJobIds?: readonly string[];
  /** Mark the worker as sending heartbeats (HTTP) so that it can be swept; never cleared. */
  readonly heartbeats?: boolean;
  /** true: heard from before asking for a job (start-up); false: it asked for a job or reported one. Absent: unchanged (a new worker starts false). */
  readonly initializing?: boolean;
  readonly pingIntervalMs?: number;
}

/** A worker removed from presence, and what became of the jobs it held. */
export interface GoneWorker extends ChangeOutcome {
  readonly endpointId: string;
  readonly workerId: string;
  /** Jobs put back in the queue (those past maxRequeues ended FAILED instead: see `ended`). */
  readonly requeued: readonly string[];
}

/** What `applyDue` did. */
export interface DueOutcome extends ChangeOutcome {
  /** Jobs deleted (ttl expiry, retention), as they were just before. */
  readonly deleted: readonly StoredJob[];
}

/** The rules of a requeue: how often a lost job goes back to the queue before it ends FAILED (SW_REQUEUE_LIMIT). */
export interface RequeueRules {
  readonly maxRequeues: number;
}
