/**
 * @module harness/endpoint-jobs
 * The jobs of one endpoint: submit, take, result, stream, progress, cancel, retry,
 * purge, and the timers for execution timeout, ttl and retention. Every change of a
 * job's state goes through `nextState` (job/states.ts), so an illegal move throws.
 * Posts of workers count only from the job's current attempt; lost jobs are requeued
 * at most maxRequeues times (attempts.ts).
 */
import { randomUUID } from 'node:crypto';
import {
  RETENTION_MS,
  ServerlessWorkerError,
  resolvePolicy,
  isTerminal,
  nextState,
  type Job,
  type JobErrorPayload,
  type JobRequest,
  type JobResult,
  type JobTrigger,
  type JobView,
  type StopReason,
  type StreamChunk,
} from '../job/index.js';
import { DEFAULT_MAX_REQUEUES, isStaleAttempt, requeueLimitPayload, stampAttempt } from './attempts.js';
import type { Clock } from './clock.js';
import { DeadlineQueue } from './deadline-queue.js';
import { syncRetentionMs, type EndpointJobsOptions, type HealthCounts, type ResultAck, type StreamRead, type SubmitOptions } from './endpoint-types.js';
import { newJobRecord, toDelivery, toJobView, type JobRecord } from './job-record.js';
import { JobChanges } from './job-changes.js';
import { Listeners } from './listeners.js';
import { TakeWaiters } from './take-waiters.js';
import { WorkerPresenceTable } from './worker-presence.js';

export * from './endpoint-types.js';

/** The timers a job can have (JobRecord.timers). */
type JobTimer = 'execution' | 'ttl' | 'retention';

export class EndpointJobs {
  readonly id: string;
  readonly #clock: Clock;
  /** Every job's execution timeout, ttl and retention, on one clock timer. */
  readonly #deadlines: DeadlineQueue<JobRecord, JobTimer>;
  readonly #jobs = new Map<string, JobRecord>();
  /** Queued jobs in arrival order (a Map keeps insertion order and deletes in O(1)). */
  readonly #queue = new Map<string, JobRecord>();
  readonly #waiters = new TakeWaiters();
  readonly workers = new WorkerPresenceTable();
  readonly #counters = { completed: 0, failed: 0, retried: 0 };
  readonly #maxRequeues: number;
  /** No job is handed out while draining (the harness is shutting down). */
  #draining = false;
  /** A worker must stop this attempt of the job (cancel, timeout, ttl). */
  readonly stopRequested: Listeners<[workerId: string, jobId: string, reason: StopReason, attempt: number]>;
  /** A job reached a terminal status (webhooks listen here). */
  readonly jobEnded: Listeners<[job: JobRecord]>;
  /** A job got a chunk, changed status, or vanished: readers of /stream wake up. */
  readonly #jobChanged = new JobChanges();
  /**
   * Execution timeout of jobs whose policy sets none, ms; undefined: the spec's
   * 600 000. The management API sets it from the endpoint's executionTimeoutMs.
   */
  defaultExecutionTimeoutMs: number | undefined;

  constructor(id: string, options: EndpointJobsOptions) {
    this.id = id;
    this.#clock = options.clock;
    this.#maxRequeues = options.maxRequeues ?? DEFAULT_MAX_REQUEUES;
    this.#deadlines = new DeadlineQueue(options.clock, (job, timer) => this.#onDeadline(job, timer));
    this.stopRequested = new Listeners(options.onListenerError);
    this.jobEnded = new Listeners(options.onListenerError);
  }

  // ---------------------------------------------------------------- submit / take

  /** Accept a validated job request: IN_QUEUE, or straight to a waiting worker. */
  submit(request: JobRequest, options: SubmitOptions = {}): JobView {
    const now = this.#clock.now();
    const sync = options.sync ?? false;
    const job = newJobRecord(
      {
        id: `${sync ? 'sync-' : ''}${randomUUID()}`,
        endpointId: this.id,
        request,
        sync,
        expiresAt: now + resolvePolicy(request.policy).ttl,
        retentionMs: sync ? syncRetentionMs(options.waitMs) : RETENTION_MS.async,
      },
      now,
    );
    this.#jobs.set(job.id, job);
    this.#armTtl(job);
    this.#enqueue(job);
    return toJobView(job);
  }

  /** Take up to `max` queued jobs for `workerId` without waiting. */
  tryTake(workerId: string, max: number): Job[] {
    const worker = this.workers.touch(workerId, this.#clock.now());
    const taken: Job[] = [];
    if (this.#draining) return taken;
    for (const job of this.#queue.values()) {
      if (taken.length >= max) break;
      this.#queue.delete(job.id);
      this.#start(job, workerId);
      worker.jobs.add(job.id);
      taken.push(toDelivery(job));
    }
    return taken;
  }

  /**
   * Take up to `max` jobs, waiting (long poll) until at least one is queued or
   * `signal` aborts; an aborted wait answers [].
   */
  take(workerId: string, max: number, signal?: AbortSignal): Promise<Job[]> {
    const taken = this.tryTake(workerId, max);
    if (taken.length > 0 || signal?.aborted || this.#draining) return Promise.resolve(taken);
    return this.#waiters.park(workerId, max, signal);
  }

  // ---------------------------------------------------------------- while running

  /**
   * Record a stream chunk of a running job, stamped with its attempt. Chunks of jobs no
   * longer running, or from an attempt other than the current one, are dropped (answer false).
   */
  pushChunk(jobId: string, workerId: string | undefined, chunk: StreamChunk, attempt?: number): boolean {
    const job = this.#held(jobId, workerId, attempt);
    if (!job) return false;
    job.unreadChunks.push(stampAttempt(chunk, job.attempt));
    job.chunkCount++;
    this.#notifyChanged(job.id);
    return true;
  }

  /** Show `output` as the running job's output (ctx.progress); only from the current attempt. */
  progress(jobId: string, workerId: string | undefined, output: unknown, attempt?: number): boolean {
    const job = this.#held(jobId, workerId, attempt);
    if (!job) return false;
    job.output = output;
    return true;
  }

  /**
   * Apply a worker's final result. Safe to repeat: the same worker's (and attempt's)
   * result again answers applied and `repeated`; a result for a job that another way
   * ended, that no longer exists, or that another worker holds is acknowledged and
   * ignored; one from an attempt other than the current one answers `stale_attempt`.
   */
  complete(jobId: string, workerId: string | undefined, result: JobResult, attempt?: number): ResultAck {
    const job = this.#jobs.get(jobId);
    if (!job) return { applied: false, reason: 'not_found' };
    if (isStaleAttempt(job, attempt)) return { applied: false, reason: 'stale_attempt', status: job.status };
    if (isTerminal(job.status)) {
      const from = job.resultFrom;
      const same = from !== undefined && from.workerId === workerId && from.attempt === job.attempt;
      return same ? { applied: true, status: job.status, repeated: true } : { applied: false, reason: 'already_ended', status: job.status };
    }
    if (job.status !== 'IN_PROGRESS' || (workerId !== undefined && job.workerId !== workerId)) {
      return { applied: false, reason: 'not_held_by_worker', status: job.status };
    }
    job.resultFrom = { workerId, attempt: job.attempt };
    if (result.kind === 'output') {
      this.#end(job, 'complete', { output: result.output });
    } else {
      this.#end(job, result.timedOut ? 'timeout' : 'fail', { error: result.error });
    }
    return { applied: true, status: job.status };
  }

  // ---------------------------------------------------------------- caller operations

  /** The job as /status shows it; throws SW_JOB_NOT_FOUND. */
  status(jobId: string): JobView {
    return toJobView(this.#get(jobId));
  }

  /** Set a job's time to live to `ttlMs` from now (GET /status?ttl=). */
  setTtl(jobId: string, ttlMs: number): JobView {
    const job = this.#get(jobId);
    job.expiresAt = this.#clock.now() + ttlMs;
    this.#armTtl(job);
    return toJobView(job);
  }

  /**
   * The chunks produced since the previous call, with the job's status, attempt and
   * retries. When a job goes back to the queue, the chunks of the attempt that was lost
   * are dropped, read or not: a reader that sees `attempt` change (or a chunk with a
   * higher `metrics.attempt`) starts over; joinChunks does so.
   */
  readStream(jobId: string): StreamRead {
    const job = this.#get(jobId);
    const stream = job.unreadChunks;
    job.unreadChunks = [];
    return { status: job.status, stream, attempt: job.attempt, retries: job.retries };
  }

  /**
   * Whether a post for `jobId` from `attempt` comes from an attempt other than the
   * job's current one (the worker API refuses it with SW_STALE_ATTEMPT). False when the
   * job does not exist or no attempt was sent.
   */
  isStale(jobId: string, attempt: number | undefined): boolean {
    const job = this.#jobs.get(jobId);
    return job !== undefined && isStaleAttempt(job, attempt);
  }

  /**
   * Stop handing out jobs (the harness is shutting down): waiting takes answer [] at
   * once and later takes find nothing; running jobs may still post their results.
   */
  stopTaking(): void {
    this.#draining = true;
    for (let waiter = this.#waiters.next(); waiter; waiter = this.#waiters.next()) waiter.resolve([]);
  }

  /** Jobs in progress and in the queue now. */
  get counts(): { inProgress: number; inQueue: number } {
    let inProgress = 0;
    for (const job of this.#jobs.values()) if (job.status === 'IN_PROGRESS') inProgress++;
    return { inProgress, inQueue: this.#queue.size };
  }

  /** Cancel a queued (removed before it starts) or running job (its worker is told to stop). */
  cancel(jobId: string): JobView {
    const job = this.#get(jobId);
    if (job.status === 'CANCELLED') return toJobView(job);
    if (isTerminal(job.status)) {
      throw new ServerlessWorkerError(
        'SW_CANCEL_NOT_ALLOWED',
        `Job ${jobId} has already ended with status ${job.status}; only IN_QUEUE or IN_PROGRESS jobs can be cancelled`,
        { jobId, status: job.status },
      );
    }
    const workerId = job.workerId;
    this.#end(job, 'cancel', {});
    if (workerId !== undefined) this.stopRequested.emit(workerId, job.id, 'cancelled', job.attempt);
    return toJobView(job);
  }

  /** Put a FAILED or TIMED_OUT job back in the queue: same id, same input, output removed. */
  retry(jobId: string): JobView {
    const job = this.#get(jobId);
    if (job.status !== 'FAILED' && job.status !== 'TIMED_OUT') {
      throw new ServerlessWorkerError(
        'SW_RETRY_NOT_ALLOWED',
        `Job ${jobId} is ${job.status}; only FAILED or TIMED_OUT jobs can be retried`,
        { jobId, status: job.status },
      );
    }
    this.#requeue(job, 'retry');
    return toJobView(job);
  }

  /** Remove every queued job (running jobs continue); answers how many were removed. */
  purgeQueue(): number {
    const removed = this.#queue.size;
    for (const job of [...this.#queue.values()]) this.#delete(job);
    return removed;
  }

  /** Put the jobs a vanished worker held back in the queue (counted as retried; past maxRequeues they end FAILED). */
  requeueWorkerJobs(workerId: string): string[] {
    const worker = this.workers.remove(workerId);
    if (!worker) return [];
    const requeued: string[] = [];
    for (const jobId of worker.jobs) {
      const job = this.#jobs.get(jobId);
      if (job && job.status === 'IN_PROGRESS' && job.workerId === workerId && this.#requeue(job, 'requeue')) requeued.push(jobId);
    }
    return requeued;
  }

  /**
   * Put one job back in the queue (counted as retried) when `workerId`, which the
   * harness handed it to, does not have it: the answer of the job-take that carried it
   * was lost on the way. Answers whether the job was requeued (false when it is no
   * longer IN_PROGRESS with that worker, or when it was lost too often and ended FAILED).
   */
  requeueJob(jobId: string, workerId: string): boolean {
    const job = this.#jobs.get(jobId);
    if (!job || job.status !== 'IN_PROGRESS' || job.workerId !== workerId) return false;
    return this.#requeue(job, 'requeue');
  }

  /**
   * Resolve with the job's view once it has ended, or once `timeoutMs` passes (then
   * with its current view). Rejects with SW_JOB_NOT_FOUND if it disappears.
   */
  waitForEnd(jobId: string, timeoutMs: number, signal?: AbortSignal): Promise<JobView> {
    const job = this.#get(jobId);
    if (isTerminal(job.status)) return Promise.resolve(toJobView(job));
    return new Promise<JobView>((resolve, reject) => {
      const finish = (): void => {
        timer.cancel();
        unsubscribe();
        signal?.removeEventListener('abort', finish);
        const current = this.#jobs.get(jobId);
        if (current) resolve(toJobView(current));
        else reject(this.#notFound(jobId));
      };
      const unsubscribe = this.onJobChange(jobId, () => {
        const current = this.#jobs.get(jobId);
        if (!current || isTerminal(current.status)) finish();
      });
      const timer = this.#clock.setTimer(timeoutMs, finish);
      signal?.addEventListener('abort', finish, { once: true });
    });
  }

  /** Call `listener` whenever the job gets a chunk, changes status, or is deleted. */
  onJobChange(jobId: string, listener: () => void): () => void {
    return this.#jobChanged.on(jobId, listener);
  }

  /** Jobs and workers, counted as /health shows them. */
  health(): HealthCounts {
    let inProgress = 0;
    for (const job of this.#jobs.values()) if (job.status === 'IN_PROGRESS') inProgress++;
    return {
      jobs: { ...this.#counters, inProgress, inQueue: this.#queue.size },
      workers: this.workers.counts(),
    };
  }

  /** Every job still kept, newest first (for /requests). */
  jobs(): JobRecord[] {
    return [...this.#jobs.values()].reverse();
  }

  /** A job record, or undefined. */
  find(jobId: string): JobRecord | undefined {
    return this.#jobs.get(jobId);
  }

  /** Cancel every timer: the harness is closing. */
  close(): void {
    this.#deadlines.clear();
  }

  // ---------------------------------------------------------------- internals

  #get(jobId: string): JobRecord {
    const job = this.#jobs.get(jobId);
    if (!job) throw this.#notFound(jobId);
    return job;
  }

  #notFound(jobId: string): ServerlessWorkerError {
    return new ServerlessWorkerError(
      'SW_JOB_NOT_FOUND',
      `Job ${jobId} not found on endpoint ${this.id}: it never existed, its ttl expired, or its results retention elapsed`,
      { jobId, endpointId: this.id },
    );
  }

  /** The job if it is running, on `attempt` (any when undefined), and held by `workerId` (any worker when undefined). */
  #held(jobId: string, workerId: string | undefined, attempt?: number): JobRecord | undefined {
    const job = this.#jobs.get(jobId);
    if (!job || job.status !== 'IN_PROGRESS' || isStaleAttempt(job, attempt)) return undefined;
    if (workerId !== undefined && job.workerId !== workerId) return undefined;
    return job;
  }

  #transition(job: JobRecord, trigger: JobTrigger): void {
    job.status = nextState(job.status, trigger, job.id);
  }

  #enqueue(job: JobRecord): void {
    const waiter = this.#draining ? undefined : this.#waiters.next();
    if (waiter) {
      const worker = this.workers.touch(waiter.workerId, this.#clock.now());
      this.#start(job, waiter.workerId);
      worker.jobs.add(job.id);
      waiter.resolve([toDelivery(job)]);
      return;
    }
    this.#queue.set(job.id, job);
  }

  #start(job: JobRecord, workerId: string): void {
    this.#transition(job, 'take');
    job.attempt++;
    job.workerId = workerId;
    job.startedAt = this.#clock.now();
    job.timers.execution = this.#deadlines.schedule(this.#executionTimeoutOf(job), job, 'execution');
    this.#notifyChanged(job.id);
  }

  /** The job's policy.executionTimeout, else the endpoint's default, else the spec's. */
  #executionTimeoutOf(job: JobRecord): number {
    return job.request.policy?.executionTimeout ?? this.defaultExecutionTimeoutMs ?? resolvePolicy(job.request.policy).executionTimeout;
  }

  #timeOut(job: JobRecord): void {
    if (job.status !== 'IN_PROGRESS') return;
    const workerId = job.workerId;
    this.#end(job, 'timeout', {
      error: {
        error_type: 'ExecutionTimeoutError',
        error_code: 'SW_EXECUTION_TIMEOUT',
        error_message: `Job ran past its execution timeout of ${this.#executionTimeoutOf(job)} ms`,
        hostname: 'harness',
        worker_id: workerId ?? '',
        runtime_version: '',
      },
    });
    if (workerId !== undefined) this.stopRequested.emit(workerId, job.id, 'timeout', job.attempt);
  }

  #end(job: JobRecord, trigger: JobTrigger, result: { output?: unknown; error?: JobErrorPayload }): void {
    this.#transition(job, trigger);
    const now = this.#clock.now();
    if (job.startedAt !== undefined) job.endedAt = now;
    if (job.status === 'COMPLETED') {
      job.output = result.output;
      this.#counters.completed++;
    } else if (job.status === 'FAILED' || job.status === 'TIMED_OUT') {
      if (result.error) job.error = result.error;
      this.#counters.failed++;
    }
    this.#queue.delete(job.id);
    this.#release(job);
    job.timers.execution?.cancel();
    job.timers.execution = undefined;
    job.timers.retention = this.#deadlines.schedule(job.retentionMs, job, 'retention');
    this.#notifyChanged(job.id);
    this.jobEnded.emit(job);
  }

  /** Back in the queue; answers false when a lost job was lost too often and ended FAILED instead. */
  #requeue(job: JobRecord, trigger: 'retry' | 'requeue'): boolean {
    if (trigger === 'requeue' && ++job.lost > this.#maxRequeues) {
      this.#end(job, 'fail', { error: requeueLimitPayload(job, this.#maxRequeues, job.workerId) });
      return false;
    }
    if (trigger === 'retry') job.lost = 0;
    this.#transition(job, trigger);
    this.#release(job);
    job.timers.retention?.cancel();
    job.timers.execution?.cancel();
    job.timers = { ttl: job.timers.ttl };
    job.output = undefined;
    job.error = undefined;
    job.startedAt = undefined;
    job.endedAt = undefined;
    job.unreadChunks = [];
    job.chunkCount = 0;
    job.resultFrom = undefined;
    job.queuedAt = this.#clock.now();
    job.retries++;
    this.#counters.retried++;
    this.#notifyChanged(job.id);
    this.#enqueue(job);
    return true;
  }

  /** The worker no longer holds the job. */
  #release(job: JobRecord): void {
    if (job.workerId !== undefined) this.workers.get(job.workerId)?.jobs.delete(job.id);
    job.workerId = undefined;
  }

  #armTtl(job: JobRecord): void {
    job.timers.ttl?.cancel();
    job.timers.ttl = this.#deadlines.schedule(job.expiresAt - this.#clock.now(), job, 'ttl');
  }

  #onDeadline(job: JobRecord, timer: JobTimer): void {
    if (timer === 'execution') this.#timeOut(job);
    else if (timer === 'ttl') this.#expire(job);
    else this.#delete(job);
  }

  /** ttl elapsed: the job is deleted in any state; a running one's worker is told to stop. */
  #expire(job: JobRecord): void {
    const workerId = job.status === 'IN_PROGRESS' ? job.workerId : undefined;
    this.#delete(job);
    if (workerId !== undefined) this.stopRequested.emit(workerId, job.id, 'expired', job.attempt);
  }

  #delete(job: JobRecord): void {
    if (this.#jobs.get(job.id) !== job) return;
    this.#cancelTimers(job);
    this.#release(job);
    this.#queue.delete(job.id);
    this.#jobs.delete(job.id);
    this.#notifyChanged(job.id);
    this.#jobChanged.forget(job.id);
  }

  #cancelTimers(job: JobRecord): void {
    job.timers.ttl?.cancel();
    job.timers.execution?.cancel();
    job.timers.retention?.cancel();
  }

  #notifyChanged(jobId: string): void {
    this.#jobChanged.notify(jobId);
  }
}
