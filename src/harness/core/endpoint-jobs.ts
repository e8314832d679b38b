/**
 * @module harness/core/endpoint-jobs
 * The facade of one endpoint's jobs: what the HTTP routes, the dashboard, the launcher
 * and the in-process transport call. The job store (store/job-store.ts) keeps the jobs
 * and decides every change; this adds what only a process has: long polls parked until
 * a 'queued' event lets a take succeed, readers woken by 'changed' events (waitForEnd,
 * onJobChange), all of them woken by a 'resync' (a shared store's notifications were
 * cut: they read again), stop requests from 'stop' events (stopRequested), draining, the
 * workers that took jobs here (what a drain waits for), and the
 * jobEnded hook, fired here for the jobs that this process's calls ended (so a webhook
 * fires once even when several harness processes share a store). Every time is read on
 * the harness's clock.
 */
import { ServerlessWorkerError, type Job, type JobRequest, type JobResult, type JobView, type StopReason, type StreamChunk } from '../../job/index.js';
import { DEFAULT_MAX_REQUEUES, isStaleAttempt, staleAttemptError } from '../store/attempts.js';
import type { Clock } from '../../clock/index.js';
import type { EndpointJobsOptions } from './endpoint-types.js';
import { EndpointWorkers } from './endpoint-workers.js';
import { waitForJobEnd } from './end-wait.js';
import { JobChanges, type JobChangeListener } from './job-changes.js';
import { newJobId } from '../store/job-id.js';
import { toJobView } from '../store/job-record.js';
import { Listeners } from './listeners.js';
import type {
  ChangeOutcome,
  EndpointSettings,
  HealthCounts,
  JobStore,
  ListPage,
  ListQuery,
  PostAck,
  RequeueRules,
  ResultAck,
  StateCounts,
  StoreEvent,
  StoredJob,
  StreamRead,
  SubmitOptions,
} from '../store/job-store.js';
import { ChunkOrder } from './chunk-order.js';
import { TakeHints } from './take-hints.js';
import { TakeWaiters, type TakeSource } from './take-waiters.js';
import { checkQueueRoom } from './queue-room.js';
import type { StopSignal } from './stop-signal.js';

export * from './endpoint-types.js';

/** How long a take that found the queue empty lets later polls park without asking the store, ms (while nothing is queued). */
const EMPTY_HINT_MS = 1_000;

export class EndpointJobs {
  readonly id: string;
  readonly #clock: Clock;
  readonly #store: JobStore;
  readonly #rules: RequeueRules;
  readonly #maxQueuedBytes: number | undefined;
  readonly #onError: (error: unknown) => void;
  readonly #waiters = new TakeWaiters();
  readonly #chunkOrder = new ChunkOrder();
  /** What the parked takers are served from: this endpoint in the store, nothing while draining. */
  readonly #takeSource: TakeSource = {
    take: (workerId, max) => this.#store.take(this.id, workerId, max, this.#clock.now()),
    giveBack: async (workerId, job) => {
      await this.#store.returnJob(this.id, job.id, workerId, job.attempt ?? 0, this.#clock.now());
    },
    stopped: () => this.#draining,
  };
  /** Wake-ups put off for jobs another process most likely takes itself. */
  readonly #takeHints: TakeHints;
  /** Counts 'queued' events, so that a take that found nothing knows whether to look again before it parks. */
  #queuedEpoch = 0;
  /** The epoch at which a take last found no more jobs than it could take, and when: until the next 'queued' event the queue holds nothing to take. */
  #emptyAt: { readonly epoch: number; readonly at: number } | undefined;
  /** No job is handed out while draining (the harness is shutting down). */
  #draining = false;
  readonly workers: EndpointWorkers;
  /** A worker must stop this attempt of the job (cancel, timeout, ttl), wherever the stop was decided. */
  readonly stopRequested: Listeners<[workerId: string, jobId: string, reason: StopReason, attempt: number]>;
  /** A job that a call of this process ended reached a terminal status (webhooks, metrics listen here). */
  readonly jobEnded: Listeners<[job: StoredJob]>;
  /** A job got a chunk, changed status, or vanished: readers of /stream wake up. */
  readonly #jobChanged = new JobChanges();
  /** Workers that asked this process for jobs (drain waits for their jobs); one removed by this process leaves. */
  readonly #takers = new Set<string>();
  /** Workers whose take went to the store through this process (the store marked their start-up over). */
  readonly #tookHere = new Set<string>();

  constructor(id: string, options: EndpointJobsOptions) {
    this.id = id;
    this.#clock = options.clock;
    this.#store = options.store;
    this.#rules = { maxRequeues: options.maxRequeues ?? DEFAULT_MAX_REQUEUES };
    this.#maxQueuedBytes = options.maxQueuedBytes;
    this.#onError = options.onListenerError ?? (() => {});
    this.#takeHints = new TakeHints(options.clock, () => this.#wakeTakers());
    this.stopRequested = new Listeners(options.onListenerError);
    this.jobEnded = new Listeners(options.onListenerError);
    this.workers = new EndpointWorkers(id, options.store, options.clock, this.#rules, (gone) => {
      this.#takers.delete(gone.workerId);
      this.#tookHere.delete(gone.workerId);
      this.reportEnded(gone);
    });
  }

  // ---------------------------------------------------------------- submit / take

  /** Accept a validated job request: IN_QUEUE (a waiting worker takes it at once). */
  async submit(request: JobRequest, options: SubmitOptions = {}): Promise<JobView> {
    return toJobView(await this.#submit(request, options));
  }

  /** Take up to `max` queued jobs for `workerId` without waiting (none while draining; the worker counts as seen). */
  async tryTake(workerId: string, max: number): Promise<Job[]> {
    this.#takers.add(workerId);
    if (this.#draining) {
      await this.workers.touch(workerId, { initializing: false });
      return [];
    }
    return this.#store.take(this.id, workerId, max, this.#clock.now());
  }

  /**
   * Take up to `max` jobs, waiting (long poll) until at least one is queued or
   * `signal` aborts; an aborted wait answers [].
   */
  async take(workerId: string, max: number, signal?: AbortSignal): Promise<Job[]> {
    for (;;) {
      const epoch = this.#queuedEpoch;
      // Nothing queued since a take found the queue empty: park without asking the store (a
      // statement per poll on a shared store). A take goes to the store again at least once a
      // second (EMPTY_HINT_MS), and a worker's first take here always does (it ends its start-up).
      const empty = this.#emptyAt;
      if (empty?.epoch === epoch && this.#clock.now() - empty.at < EMPTY_HINT_MS && this.#tookHere.has(workerId) && !this.#draining) {
        this.#takers.add(workerId);
        return this.#waiters.park(workerId, max, signal);
      }
      const at = this.#clock.now();
      const taken = await this.tryTake(workerId, max);
      if (!this.#draining) this.#tookHere.add(workerId);
      if (taken.length < max) this.#emptyAt = { epoch, at };
      if (taken.length > 0 || signal?.aborted || this.#draining) return taken;
      // A job queued while the store answered: look again rather than wait for the next one.
      if (epoch === this.#queuedEpoch) return this.#waiters.park(workerId, max, signal);
    }
  }

  // ---------------------------------------------------------------- while running

  /** Record a stream chunk of a running job (see JobStore.pushChunk); answers whether it was applied. */
  async pushChunk(jobId: string, workerId: string | undefined, chunk: StreamChunk, attempt?: number): Promise<boolean> {
    return (await this.postChunk(jobId, workerId, chunk, attempt)).applied;
  }

  /**
   * pushChunk with the store's answer: why a chunk was not applied (duplicate,
   * stale_attempt, ...). A chunk that came before one it follows is held until that one
   * is stored (chunk-order.ts); `ahead` only when it is too far ahead to hold.
   */
  postChunk(jobId: string, workerId: string | undefined, chunk: StreamChunk, attempt?: number): Promise<PostAck> {
    const push = (): Promise<PostAck> => this.#store.pushChunk(this.id, jobId, workerId, chunk, attempt, this.#clock.now());
    const index = chunk.metrics?.stream_index;
    // Without an index, or a post by the harness itself (no worker): stored as it comes.
    if (typeof index !== 'number' || workerId === undefined) return push();
    return this.#chunkOrder.post(jobId, index, push, (listener) => this.onJobChange(jobId, listener));
  }

  /** Show `output` as the running job's output (ctx.progress); only from the current attempt. */
  async progress(jobId: string, workerId: string | undefined, output: unknown, attempt?: number): Promise<boolean> {
    return (await this.postProgress(jobId, workerId, output, attempt)).applied;
  }

  /** progress with the store's answer: why it was not applied. */
  postProgress(jobId: string, workerId: string | undefined, output: unknown, attempt?: number): Promise<PostAck> {
    return this.#store.progress(this.id, jobId, workerId, output, attempt, this.#clock.now());
  }

  /** Apply a worker's final result (see JobStore.complete). */
  async complete(jobId: string, workerId: string | undefined, result: JobResult, attempt?: number): Promise<ResultAck> {
    const outcome = await this.#store.complete(this.id, jobId, workerId, result, attempt, this.#clock.now());
    this.reportEnded(outcome);
    return outcome.ack;
  }

  // ---------------------------------------------------------------- caller operations

  /** The job as /status shows it; throws SW_JOB_NOT_FOUND. */
  async status(jobId: string): Promise<JobView> {
    return toJobView(await this.#found(jobId));
  }

  /** Set a job's time to live to `ttlMs` from now (GET /status?ttl=). */
  async setTtl(jobId: string, ttlMs: number): Promise<JobView> {
    return toJobView(await this.#store.setTtl(this.id, jobId, ttlMs, this.#clock.now()));
  }

  /** The chunks produced since the previous call, with the job's status, attempt and retries (see JobStore.readStream). */
  readStream(jobId: string): Promise<StreamRead> {
    return this.#store.readStream(this.id, jobId);
  }

  /** The unread chunks without consuming them; undefined when the job does not exist. */
  peekStream(jobId: string): Promise<readonly StreamChunk[] | undefined> {
    return this.#store.peekStream(this.id, jobId);
  }

  /** Whether a post for `jobId` from `attempt` comes from an attempt other than the job's current one (false: no such job, or no attempt sent). */
  async isStale(jobId: string, attempt: number | undefined): Promise<boolean> {
    if (attempt === undefined) return false;
    const job = await this.find(jobId);
    return job !== undefined && isStaleAttempt(job, attempt);
  }

  /** Throw SW_STALE_ATTEMPT when `attempt` is not the job's current one (the `what` of a post: 'result', 'stream chunk'). */
  async refuseStale(jobId: string, attempt: number | undefined, what: string): Promise<void> {
    if (attempt === undefined) return;
    const job = await this.find(jobId);
    if (job !== undefined && isStaleAttempt(job, attempt)) throw staleAttemptError(job, attempt, what);
  }

  /**
   * Stop handing out jobs (the harness is shutting down): waiting takes answer [] at
   * once and later takes find nothing; running jobs may still post their results.
   */
  stopTaking(): void {
    this.#draining = true;
    for (const waiter of this.#waiters.all()) waiter.resolve([]);
  }

  /** Jobs in progress and in the queue now (in the whole store: every harness process on it). */
  async counts(): Promise<{ inProgress: number; inQueue: number }> {
    const { inProgress, inQueue } = (await this.#store.health(this.id)).jobs;
    return { inProgress, inQueue };
  }

  /**
   * Jobs IN_PROGRESS now with the workers that took jobs through this process (what a
   * drain of this process waits for: on a shared store, other processes' workers are
   * theirs). Workers the store no longer knows are forgotten here.
   */
  async heldHere(): Promise<number> {
    let held = 0;
    for (const workerId of [...this.#takers]) {
      const worker = await this.workers.get(workerId);
      if (worker === undefined) this.#takers.delete(workerId);
      else held += worker.jobIds.length;
    }
    return held;
  }

  /** Cancel a queued (removed before it starts) or running job (its worker is told to stop). */
  async cancel(jobId: string): Promise<JobView> {
    const outcome = await this.#store.cancel(this.id, jobId, this.#clock.now());
    this.reportEnded(outcome);
    return toJobView(outcome.job);
  }

  /** Put a FAILED or TIMED_OUT job back in the queue: same id, same input, output removed. */
  async retry(jobId: string): Promise<JobView> {
    return toJobView(await this.#store.retry(this.id, jobId, this.#clock.now()));
  }

  /** Remove every queued job (running jobs continue); answers how many were removed. */
  purgeQueue(): Promise<number> {
    return this.#store.purgeQueue(this.id, this.#clock.now());
  }

  /** Put the jobs a vanished worker held back in the queue and forget it (counted as retried; past maxRequeues they end FAILED). */
  async requeueWorkerJobs(workerId: string): Promise<string[]> {
    return [...((await this.workers.remove(workerId))?.requeued ?? [])];
  }

  /**
   * Put one job back in the queue (counted as retried) when `workerId`, which the
   * harness handed it to, does not have it: the answer of the job-take that carried it
   * was lost. Answers whether it was requeued (false when it is no longer IN_PROGRESS
   * with that worker, or when it was lost too often and ended FAILED).
   */
  async requeueJob(jobId: string, workerId: string): Promise<boolean> {
    const outcome = await this.#store.requeueJob(this.id, jobId, workerId, this.#rules, this.#clock.now());
    this.reportEnded(outcome);
    return outcome.requeued;
  }

  /** Jobs `workerId` holds that its heartbeats have not listed since before `unreportedBefore` (their take answer was lost). */
  unreportedJobs(workerId: string, unreportedBefore: number): Promise<string[]> {
    return this.#store.unreportedJobs(this.id, workerId, unreportedBefore);
  }

  /**
   * Resolve with the job's view once it has ended, or once `timeoutMs` passes (then
   * with its current view). Rejects with SW_JOB_NOT_FOUND if it disappears.
   */
  waitForEnd(jobId: string, timeoutMs: number, signal?: StopSignal): Promise<JobView> {
    return this.#waitForEnd(jobId, timeoutMs, signal, () => this.#found(jobId));
  }

  /**
   * Submit (see submit) and wait for the job's end as waitForEnd does (/runsync). The
   * wait listens for the job's changes from before the submit (its id is made here), so
   * the submitted job is what it starts from, without a read.
   */
  submitAndWait(request: JobRequest, options: SubmitOptions, timeoutMs: number, signal?: StopSignal): Promise<JobView> {
    const id = options.id ?? newJobId(options.sync ?? false);
    return this.#waitForEnd(id, timeoutMs, signal, () => this.#submit(request, { ...options, id }));
  }

  #waitForEnd(jobId: string, timeoutMs: number, signal: StopSignal | undefined, first: () => Promise<StoredJob>): Promise<JobView> {
    const onJobChange = (listener: JobChangeListener): (() => void) => this.onJobChange(jobId, listener);
    return waitForJobEnd({ clock: this.#clock, onJobChange, first, read: () => this.#found(jobId) }, timeoutMs, signal);
  }

  /** Call `listener` whenever the job gets a chunk, changes status, or is deleted. */
  onJobChange(jobId: string, listener: JobChangeListener): () => void {
    return this.#jobChanged.on(jobId, listener);
  }

  /** Jobs and workers, counted as /health shows them. */
  health(): Promise<HealthCounts> {
    return this.#store.health(this.id);
  }

  /** Jobs kept per status, and all of them. */
  stateCounts(): Promise<StateCounts> {
    return this.#store.stateCounts(this.id);
  }

  /** A page of jobs, newest first (for /requests and the dashboard). */
  list(query: ListQuery): Promise<ListPage> {
    return this.#store.list(this.id, query);
  }

  /** Every job still kept, newest first (tests, small tools: the request list pages instead). */
  async jobs(): Promise<StoredJob[]> {
    return [...(await this.list({ offset: 0, limit: Number.MAX_SAFE_INTEGER })).jobs];
  }

  /** A job record, or undefined. */
  find(jobId: string): Promise<StoredJob | undefined> {
    return this.#store.get(this.id, jobId);
  }

  /** Set the endpoint's settings (the management API's executionTimeoutMs). */
  configure(settings: EndpointSettings): Promise<void> {
    return this.#store.createEndpoint(this.id, settings);
  }

  // ---------------------------------------------------------------- from the harness

  /** @internal The harness routes the store's events for this endpoint here. */
  onStoreEvent(event: StoreEvent): void {
    if (event.type === 'queued') {
      // Another process queued a job that a taker of its own takes at once: wake in a moment, unless its take is told first.
      if (event.takerWaitingFor !== undefined) this.#takeHints.hinted(event.takerWaitingFor);
      else this.#wakeTakers();
    } else if (event.type === 'changed') {
      if (event.status === 'IN_PROGRESS') this.#takeHints.taken(event.jobId);
      this.#jobChanged.notify(event.jobId, event.status, event.ended);
    } else if (event.type === 'resync') {
      // Events may have been missed: takers look again, and every job reader reads again.
      this.#takeHints.flush();
      this.#queuedEpoch++;
      this.#waiters.serve(this.#takeSource, this.#onError);
      this.#jobChanged.notifyAll();
    } else if (event.type === 'stop') {
      this.stopRequested.emit(event.workerId, event.jobId, event.reason, event.attempt);
    }
  }

  /** @internal Fire jobEnded for the jobs a call of this process ended. */
  reportEnded(outcome: Pick<ChangeOutcome, 'ended'>): void {
    for (const job of outcome.ended) this.jobEnded.emit(job);
  }

  // ---------------------------------------------------------------- internals

  /** A job was queued: takes look in the store again, and parked takers are served (longest waiting first). */
  #wakeTakers(): void {
    this.#queuedEpoch++;
    this.#waiters.serve(this.#takeSource, this.#onError);
  }

  #submit(request: JobRequest, options: SubmitOptions): Promise<StoredJob> {
    checkQueueRoom(this.#store, this.#maxQueuedBytes, options.bytes ?? 0);
    const takerWaiting = this.#waiters.size > 0 && !this.#draining;
    return this.#store.submit(this.id, request, { ...options, takerWaiting }, this.#clock.now());
  }

  async #found(jobId: string): Promise<StoredJob> {
    const job = await this.#store.get(this.id, jobId);
    if (!job) {
      throw new ServerlessWorkerError(
        'SW_JOB_NOT_FOUND',
        `Job ${jobId} not found on endpoint ${this.id}: it never existed, its ttl expired, or its results retention elapsed`,
        { jobId, endpointId: this.id },
      );
    }
    return job;
  }
}
