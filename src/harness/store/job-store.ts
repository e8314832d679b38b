/**
 * @module harness/store/job-store
 * The job store contract: where the harness keeps its jobs, and the only place that
 * decides what happens to one. Two stores fit it: the in-memory store (the default,
 * memory-job-store.ts) and the PostgreSQL store (several harness processes on one
 * database share the queue). Every store passes the same conformance suite
 * (test/harness/store/job-store-conformance.ts, `describeJobStore`).
 *
 * ## Division of labour
 *
 * - **The store** (this contract) holds jobs, their chunks, per-endpoint counters and
 *   worker presence, and applies every rule that changes them: the state table
 *   (job/states.ts `nextState`), attempts and result acks (attempts.ts), requeues with
 *   the `maxRequeues` cap, and the time rules. It is the one that makes a change
 *   exactly once when several harness processes share it: one taker per job, one
 *   timeout, one ttl expiry, one requeue of a dead worker's jobs. It never waits, never
 *   arms a timer and never calls back into the harness except through `subscribe`.
 * - **The scheduler** (scheduler.ts) owns time on the harness's Clock: it asks the store
 *   `nextDueAt()`, arms one clock timer, and calls `applyDue(now)` when it fires; it also
 *   sweeps silent workers (`sweepSilentWorkers`) and runs webhook retries. Tests drive
 *   it with a ManualClock.
 * - **The facade** (`EndpointJobs`, one per endpoint, what `Harness.endpoint(id)`
 *   answers) is what the HTTP routes, the UI, the launcher and the in-process transport
 *   call. It keeps what only a process has: parked long polls (it retries `take` on a
 *   'queued' event), `waitForEnd` and `onJobChange` readers (woken by 'changed'
 *   events), `stopRequested` listeners (fed by 'stop' events), draining, and the
 *   `jobEnded` hook (webhooks, metrics, dashboard series), which it fires from the
 *   `ended` lists that store calls answer, never from events: the process whose call
 *   ended a job fires its webhook, so a webhook fires once across processes.
 *
 * ## Rules every store keeps
 *
 * - Every call names its endpoint; a job id is unique within its endpoint. A call about
 *   an endpoint that does not exist acts as on an empty endpoint (answers undefined,
 *   false, zero, or throws SW_JOB_NOT_FOUND as its doc says); `createEndpoint` makes one.
 * - Records in, records out: every record answered is a fresh, frozen-in-spirit copy
 *   (`readonly` fields); mutating it changes nothing in the store, and the store never
 *   keeps a reference to an object a caller passed in (requests, outputs, chunks are
 *   JSON values: a store may copy them by structuredClone or by a JSON round trip).
 * - Time is the caller's: every call that may change something takes `now` (epoch ms
 *   from the harness's Clock) and stores absolute times; the store never reads a clock.
 * - Deadlines are data on the job (`expiresAt`, `executionDeadline`, `deleteAt`).
 *   `applyDue(now)` applies every deadline that is `<= now`; a deadline moved or cleared
 *   by an earlier call no longer applies.
 * - Errors are ServerlessWorkerError with the codes the HTTP layer answers:
 *   SW_JOB_NOT_FOUND, SW_CANCEL_NOT_ALLOWED, SW_RETRY_NOT_ALLOWED. A store failure (a
 *   lost database connection) rejects with the underlying error; the call may be
 *   retried by the caller.
 * - Events (`subscribe`) are hints to wake waiters, never the record of a change: a
 *   listener must read the store to learn what changed, and a store may merge or repeat
 *   events (at-least-once). A store emits an event only after the change it announces
 *   is visible to every reader. Listener errors are the store's caller's problem: the
 *   store catches and drops what a listener throws.
 *
 * ## Why `take` does not wait
 *
 * A long poll is a process's business (its socket, its AbortSignal, its draining), so
 * the facade parks takers and calls `take` again on each 'queued' event for the
 * endpoint; the store only answers "what can be handed out now".
 */
import type { Job, JobErrorPayload, JobRequest, JobResult, JobStatus, StopReason, StreamChunk } from '../../job/index.js';

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
  | { readonly applied: false; readonly reason: 'not_found' | 'not_held_by_worker' | 'stale_attempt' | 'duplicate'; readonly status?: JobStatus };

/** What `/stream` reads: the unread chunks, the status, and the attempt and retries that tell a reader the stream restarted. */
export interface StreamRead {
  readonly status: JobStatus;
  readonly stream: readonly StreamChunk[];
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

export interface ListQuery {
  /** Only these states; default all. */
  readonly states?: readonly JobStatus[] | undefined;
  /** Only ids containing this text, case-insensitive (an exact id is found at once); default all. */
  readonly search?: string | undefined;
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

// ------------------------------------------------------------------ events

/**
 * Wake-up hints. 'queued': a take on the endpoint may now succeed (a submit, retry or
 * requeue). 'changed': the job got a chunk or progress, changed status, or was deleted
 * (readers of /stream, /status-sync, /runsync wake). 'stop': the worker holding this
 * attempt must stop it (cancel, execution timeout, ttl expiry); every harness process
 * gets it, and the one the worker is connected to delivers it. 'worker': presence
 * changed (a worker came, took or released a job, or went).
 */
export type StoreEvent =
  | { readonly type: 'queued'; readonly endpointId: string }
  | { readonly type: 'changed'; readonly endpointId: string; readonly jobId: string }
  | ({ readonly type: 'stop' } & StopOrder)
  | { readonly type: 'worker'; readonly endpointId: string; readonly workerId: string };

// ------------------------------------------------------------------ the contract

export interface JobStore {
  /** A short name for logs and /health: 'memory', 'postgres'. */
  readonly kind: string;

  // -------------------------------------------------------------- endpoints

  /** Create the endpoint, or update the settings of an existing one (settings given replace those kept). */
  createEndpoint(endpointId: string, settings?: EndpointSettings): Promise<void>;
  /** Delete the endpoint with its jobs, chunks and workers; answers whether it existed. Running jobs' workers get no stop. */
  deleteEndpoint(endpointId: string): Promise<boolean>;
  /** Every endpoint id, sorted. */
  listEndpoints(): Promise<string[]>;
  /** The endpoint's settings, or undefined when it does not exist. */
  endpointSettings(endpointId: string): Promise<EndpointSettings | undefined>;

  // -------------------------------------------------------------- submit / take

  /**
   * Store a validated request as a new IN_QUEUE job (id `sync-<uuid>` when sync, else a
   * uuid; expiresAt = now + policy ttl; retentionMs from sync/waitMs) and emit 'queued'.
   * Creates the endpoint when missing.
   */
  submit(endpointId: string, request: JobRequest, options: SubmitOptions, now: number): Promise<StoredJob>;

  /**
   * Hand up to `max` queued jobs to `workerId`, oldest `queuedAt` first, without
   * waiting: each goes IN_QUEUE → IN_PROGRESS, attempt + 1, startedAt = now, workerId,
   * executionDeadline = now + its execution timeout; its chunks are cleared. Exactly one
   * taker gets a job, across processes. Touches the worker (lastSeenAt = now,
   * initializing false). Answers the deliveries (job/job.ts `Job`, with `attempt`).
   */
  take(endpointId: string, workerId: string, max: number, now: number): Promise<Job[]>;

  // -------------------------------------------------------------- while running

  /**
   * Record one stream chunk of a running job held by `workerId` (any worker when
   * undefined) on `attempt` (any when undefined), stamped with the job's attempt in
   * `metrics.attempt` (attempts.ts stampAttempt). A chunk whose `metrics.stream_index`
   * is below the job's chunkCount, from the holding worker, is a retried post:
   * `duplicate`, stored once. Emits 'changed' when applied.
   */
  pushChunk(endpointId: string, jobId: string, workerId: string | undefined, chunk: StreamChunk, attempt: number | undefined, now: number): Promise<PostAck>;

  /** Show `output` as the running job's output (ctx.progress); same holder and attempt rules as pushChunk. Emits 'changed' when applied. */
  progress(endpointId: string, jobId: string, workerId: string | undefined, output: unknown, attempt: number | undefined, now: number): Promise<PostAck>;

  /**
   * Apply a worker's final result (today's rules): not_found; stale_attempt (an attempt
   * other than the current one, or any while IN_QUEUE); already ended → applied +
   * repeated when the same worker and attempt ended it, else already_ended; not
   * IN_PROGRESS or held by another worker → not_held_by_worker. Applied: COMPLETED with
   * the output, FAILED with the error, TIMED_OUT when `timedOut`; endedAt, deleteAt set,
   * executionDeadline cleared, counters moved; the job is in `outcome.ended`.
   */
  complete(
    endpointId: string,
    jobId: string,
    workerId: string | undefined,
    result: JobResult,
    attempt: number | undefined,
    now: number,
  ): Promise<{ readonly ack: ResultAck } & ChangeOutcome>;

  // -------------------------------------------------------------- reading

  /** The job, or undefined when it does not exist (never existed, ttl, retention, purge). */
  get(endpointId: string, jobId: string): Promise<StoredJob | undefined>;

  /**
   * The chunks not yet read, handed out once (a second call answers only newer ones),
   * with status, attempt and retries. Throws SW_JOB_NOT_FOUND. When a job goes back to
   * the queue the lost attempt's chunks are dropped, read or not.
   */
  readStream(endpointId: string, jobId: string): Promise<StreamRead>;
  /** The unread chunks without consuming them (the dashboard's job page); undefined when the job does not exist. */
  peekStream(endpointId: string, jobId: string): Promise<readonly StreamChunk[] | undefined>;

  /** A page of the endpoint's jobs, newest submission first, with the total matching. Cheap with 100 000 jobs kept when unfiltered or filtered by state. */
  list(endpointId: string, query: ListQuery): Promise<ListPage>;
  /** Jobs kept per status (counters, no walk). */
  stateCounts(endpointId: string): Promise<StateCounts>;
  /** /health: completed, failed, retried since the endpoint was created; in progress and queued now; idle and running workers (initializing ones left out). */
  health(endpointId: string): Promise<HealthCounts>;

  // -------------------------------------------------------------- caller operations

  /**
   * Cancel a queued or running job: CANCELLED (endedAt only when it had started),
   * deleteAt set; a running one's worker gets a stop 'cancelled'. A CANCELLED job answers
   * as it is, no change. Throws SW_JOB_NOT_FOUND, or SW_CANCEL_NOT_ALLOWED for any
   * other ended job.
   */
  cancel(endpointId: string, jobId: string, now: number): Promise<{ readonly job: StoredJob } & ChangeOutcome>;

  /**
   * Put a FAILED or TIMED_OUT job back in the queue: same id and input; output, error,
   * startedAt, endedAt, deleteAt, chunks and `lost` cleared; retries + 1, queuedAt = now;
   * emits 'queued'. Throws SW_JOB_NOT_FOUND or SW_RETRY_NOT_ALLOWED.
   */
  retry(endpointId: string, jobId: string, now: number): Promise<StoredJob>;

  /** Set the job's ttl to `ttlMs` from now (expiresAt = now + ttlMs). Throws SW_JOB_NOT_FOUND. */
  setTtl(endpointId: string, jobId: string, ttlMs: number, now: number): Promise<StoredJob>;

  /** Delete every IN_QUEUE job (running ones continue); answers how many. Emits 'changed' per job. */
  purgeQueue(endpointId: string, now: number): Promise<number>;

  // -------------------------------------------------------------- lost jobs

  /**
   * The job's take answer never reached `workerId`: when the job is still IN_PROGRESS
   * with that worker, lost + 1 and back in the queue (retries + 1, chunks dropped,
   * 'queued'), or, past `rules.maxRequeues`, FAILED with SW_REQUEUE_LIMIT (in `ended`).
   * `requeued` false when nothing was requeued.
   */
  requeueJob(endpointId: string, jobId: string, workerId: string, rules: RequeueRules, now: number): Promise<{ readonly requeued: boolean } & ChangeOutcome>;

  // -------------------------------------------------------------- workers

  /** The worker was heard from at `now`: create or update its presence (see TouchWorker). */
  touchWorker(endpointId: string, workerId: string, touch: TouchWorker, now: number): Promise<StoredWorker>;
  /** The worker, or undefined. */
  getWorker(endpointId: string, workerId: string): Promise<StoredWorker | undefined>;
  /** Every worker of the endpoint, first seen first. */
  listWorkers(endpointId: string): Promise<StoredWorker[]>;

  /**
   * Remove the worker (it reported itself unhealthy, its process exited, it closed)
   * and requeue every job it holds as `requeueJob` does. Answers undefined when it was
   * not there (already removed: by another process, too).
   */
  removeWorker(endpointId: string, workerId: string, rules: RequeueRules, now: number): Promise<GoneWorker | undefined>;

  /**
   * Remove every worker with `heartbeats` whose lastSeenAt is before `silentBefore`,
   * on every endpoint, requeueing their jobs: each such worker is removed once across
   * processes (DELETE … WHERE last_seen_at < $1 RETURNING).
   */
  sweepSilentWorkers(silentBefore: number, rules: RequeueRules, now: number): Promise<GoneWorker[]>;

  /**
   * Jobs IN_PROGRESS with `workerId` whose max(startedAt, reportedAt) is before
   * `unreportedBefore`: handed to it, but absent from its heartbeats for the whole
   * silence window (their take answer was lost). The caller requeues each (requeueJob).
   */
  unreportedJobs(endpointId: string, workerId: string, unreportedBefore: number): Promise<string[]>;

  // -------------------------------------------------------------- time

  /** The earliest deadline still to apply (expiresAt, executionDeadline, deleteAt of any job), or undefined. */
  nextDueAt(): Promise<number | undefined>;

  /**
   * Apply every rule due at `now`, each exactly once across processes, in due order:
   * ttl expiry (expiresAt <= now: the job is deleted in any state; a running one's
   * worker gets a stop 'expired'), execution timeout (executionDeadline <= now on an
   * IN_PROGRESS job: TIMED_OUT with SW_EXECUTION_TIMEOUT, stop 'timeout', in `ended`),
   * retention (deleteAt <= now: deleted). Emits 'changed' per job touched.
   */
  applyDue(now: number): Promise<DueOutcome>;

  // -------------------------------------------------------------- events and life

  /** Call `listener` on every event (in this process and, for shared stores, in others); answers the function that removes it. */
  subscribe(listener: (event: StoreEvent) => void): () => void;

  /** Release connections and listeners; later calls reject. */
  close(): Promise<void>;
}
