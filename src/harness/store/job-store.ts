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
 *   A request's input may be a RawJson (a large body's input kept as the text received,
 *   job/raw-json.ts): a store keeps or writes that text as it is, never parses it at
 *   submission, and `take` may hand it on as it is (readers use `inputValue`).
 * - A result, chunk or progress a store cannot keep (its copy or serialization throws)
 *   rejects the call and changes nothing: never a COMPLETED job without its output.
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
import type { Job, JobRequest, JobResult, JobStatus, JobView, StreamChunk } from '../../job/index.js';
import type {
  ChangeOutcome,
  DueOutcome,
  EndpointSettings,
  GoneWorker,
  HealthCounts,
  ListPage,
  ListQuery,
  PostAck,
  RequeueRules,
  ResultAck,
  StateCounts,
  StopOrder,
  StoredJob,
  StoredWorker,
  StreamRead,
  SubmitOptions,
  TouchWorker,
} from './store-types.js';

export type * from './store-types.js';

// ------------------------------------------------------------------ events

/**
 * Wake-up hints. 'queued': a take on the endpoint may now succeed (a submit, retry or
 * requeue). 'changed': the job got a chunk or progress, changed status, or was deleted
 * (readers of /stream, /status-sync, /runsync wake). 'stop': the worker holding this
 * attempt must stop it (cancel, execution timeout, ttl expiry); every harness process
 * gets it, and the one the worker is connected to delivers it. 'worker': presence
 * changed (a worker came, took or released a job, or went). 'resync': events about the
 * endpoint may have been missed (a shared store's notification connection was lost and
 * is back): every waiter reads again (parked takers, job readers). Stops missed then are
 * not replayed: the worker API sends a stop for any job a worker's heartbeat lists that
 * is no longer running with it.
 */
export type StoreEvent =
  | {
      readonly type: 'queued';
      readonly endpointId: string;
      /**
       * The job queued, when the submit that queued it knew a taker of its own process was
       * waiting (SubmitOptions.takerWaiting): that process will most likely take it, so
       * another process's waiting takers give it a moment (take-hints.ts) and go to the store
       * only when they were not told of its take.
       */
      readonly takerWaitingFor?: string;
      /** The deadline the change set on the job (its ttl), when the store says: see 'changed'. */
      readonly due?: number;
    }
  | {
      readonly type: 'changed';
      readonly endpointId: string;
      readonly jobId: string;
      /** The job's status after the change, when the change set it: a reader waiting for the end skips a read while it is not terminal. */
      readonly status?: JobStatus;
      /**
       * The job's view (as /status shows it) once the change ended it, when the store had
       * the job in hand (a result): a reader waiting for the end answers without a read.
       * A shared store sends it to other processes when it is small.
       */
      readonly ended?: JobView;
      /**
       * The earliest deadline the change set on the job (execution timeout, retention),
       * when the store says: a scheduler of a shared store arms its timer for it instead of
       * asking the store for the next deadline (nextDueAt) on every event. Absent: ask.
       */
      readonly due?: number;
    }
  | ({ readonly type: 'stop' } & StopOrder)
  | { readonly type: 'worker'; readonly endpointId: string; readonly workerId: string }
  | { readonly type: 'resync'; readonly endpointId: string };

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
   * Optional: the bytes (SubmitOptions.bytes) of the requests queued in this process's
   * memory, every endpoint together: what the harness's maxQueuedBytes caps. A store
   * that keeps its queue elsewhere (PostgreSQL) leaves it out, and the cap does not apply.
   */
  queuedBytes?(): number;

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

  /**
   * Put back a job that `take` handed to `workerId` at `attempt` but that never left
   * this process (the long poll it was taken for gave up while the store answered): when
   * it is still IN_PROGRESS with that worker and attempt, it is IN_QUEUE again at its
   * old place in the queue (queuedAt kept), as if never taken: attempt - 1, startedAt,
   * workerId and the execution deadline cleared, neither `lost` nor `retries` counted
   * (it cannot fail with SW_REQUEUE_LIMIT). Emits 'changed' and 'queued'. Answers
   * whether it was put back.
   */
  returnJob(endpointId: string, jobId: string, workerId: string, attempt: number, now: number): Promise<boolean>;

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
   * Optional: nextDueAt answered synchronously, for a store whose deadlines live in this
   * process (the memory store). The scheduler then re-arms its timer within the same
   * clock tick, so a ManualClock advance applies each deadline in its window at its own
   * time. A shared store leaves it out: the scheduler then asks nextDueAt after each
   * applyDue and on events.
   */
  peekNextDueAt?(): number | undefined;

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
