/**
 * @module harness/worker-api/worker-api-calls
 * What the worker API does for each call, whoever carries it (the HTTP routes of
 * worker-api-routes.ts, or the channel of a supervised child through direct-calls.ts):
 * take jobs, end or progress one, store a chunk, deliver stops, hear a heartbeat. It holds
 * the API's state: the workers' liveness, the stops waiting for their worker's job-stop
 * poll (and the timer that prunes them, armed only while some wait), the takes in flight
 * on another channel, and the server's closing.
 */
import type { FastifyBaseLogger } from 'fastify';
import {
  type EndpointJobs,
  type Harness,
  HeldList,
  type Job,
  type JobErrorPayload,
  type JobResult,
  MAX_CHUNKS_AHEAD,
  MAX_HELD_CHUNKS,
  MAX_JSON_DEPTH,
  ServerlessWorkerError,
  staleAttemptError,
  type StopReason,
  type StreamChunk,
  type TimerHandle,
} from 'serverless-worker/internal';
import { DoneBodySchema, StreamBodySchema, bodyTooDeep, checkResultKeys, looksLikeProgress, parseJsonObject, workerErrorPayload } from './bodies.js';
import type { WorkerApiEvents, WorkerApiSettings } from './options.js';
import { PendingStops, type StopBatch } from './pending-stops.js';
import { isStreamBatch, parseStreamBatch } from './stream-batch.js';
import type { DirectAnswer, WorkerApiLog } from './direct-calls.js';
import { WorkerLiveness, type GoneWorker } from './worker-liveness.js';

/** The signal of a take that must not wait (takeNow). */
const NO_WAIT = AbortSignal.abort();

/** A chunk too far ahead of the next one the job expects for the harness to hold it (chunk-order.ts). */
function streamIndexAhead(jobId: string, attempt: number | undefined, index: unknown, expected: number): ServerlessWorkerError {
  return new ServerlessWorkerError(
    'SW_STREAM_INDEX_AHEAD',
    `job-stream chunk with metrics.stream_index ${String(index)} of job ${jobId} is too far ahead: the next chunk expected is ${expected}; a chunk is held for an earlier one only when at most ${MAX_CHUNKS_AHEAD} ahead and while fewer than ${MAX_HELD_CHUNKS} are held for the job`,
    { jobId, attempt: attempt ?? null, streamIndex: index, expected, maxAhead: MAX_CHUNKS_AHEAD, maxHeld: MAX_HELD_CHUNKS },
  );
}

/** A heartbeat's query, as the ping route read it. */
export interface PingQuery {
  readonly status?: string;
  readonly check?: string;
  readonly reason?: string;
  readonly job_id?: string;
  readonly runpod_version?: string;
}

export class WorkerApiCallHandler {
  readonly settings: WorkerApiSettings;
  readonly liveness: WorkerLiveness;
  /** Aborted when the server closes: held polls answer now, or close() would wait for them. */
  readonly closing = new AbortController();
  readonly #harness: Harness;
  readonly #events: WorkerApiEvents;
  readonly #log: FastifyBaseLogger;
  readonly #stops: PendingStops;
  /** Takes of workers on another channel under way (take): closing aborts them, as it answers held polls. One a job: a HeldList (collections/held-list.ts). */
  readonly #directTakes = new HeldList<AbortController>();
  readonly #unsubscribers: Array<() => void> = [];
  readonly #pruneEveryMs: number;
  #pruneTimer: TimerHandle | undefined;
  #closed = false;

  constructor(harness: Harness, settings: WorkerApiSettings, events: WorkerApiEvents, log: FastifyBaseLogger) {
    this.#harness = harness;
    this.settings = settings;
    this.#events = events;
    this.#log = log;
    // The prune timer runs only while stops are held: an idle harness arms none.
    this.#pruneEveryMs = Math.min(settings.stopRetentionMs, 60_000);
    this.#stops = new PendingStops(
      settings.stopRetentionMs,
      () => harness.clock.now(),
      () => this.#armPrune(),
    );
    this.liveness = new WorkerLiveness(harness, settings.liveness, (gone) => this.#onGone(gone));
    // Stops for workers that reached us over HTTP wait for their job-stop poll.
    this.#unsubscribers.push(
      harness.onEndpoint((endpoint) => {
        this.#unsubscribers.push(
          endpoint.stopRequested.add((workerId: string, jobId: string, reason: StopReason, attempt: number) => {
            if (this.liveness.isKnown(endpoint.id, workerId)) this.#stops.record(endpoint.id, workerId, jobId, reason, attempt);
          }),
        );
      }),
    );
    this.liveness.start();
  }

  /** The server is closing: held polls and takes on another channel end now. */
  beginClose(): void {
    this.closing.abort();
    for (const controller of this.#directTakes.values()) controller.abort();
  }

  /** The server has closed: liveness, the prune timer and the subscriptions end. */
  close(): void {
    this.liveness.stop();
    this.#closed = true;
    this.#pruneTimer?.cancel();
    for (const unsubscribe of this.#unsubscribers.splice(0)) unsubscribe();
  }

  endpoint(endpointId: string): EndpointJobs {
    return this.#harness.endpoint(endpointId);
  }

  /** Jobs handed out: stops recorded for their earlier runs are forgotten, and the event told. */
  tookJobs(endpointId: string, workerId: string, jobs: readonly Job[]): void {
    this.#stops.forget(
      endpointId,
      workerId,
      jobs.map((job) => job.id),
    );
    this.#events.onJobsTaken?.({ endpointId, workerId, jobs: jobs.map((job) => ({ id: job.id, attempt: job.attempt })) });
  }

  /**
   * job-take for a worker on another channel (direct-calls.ts): the caller's controller in
   * place of the held request's signal, aborted here too when the worker is declared gone
   * or the server closes. One controller per take rather than a signal joined of three
   * (AbortSignal.any): a take per job (bench/README, issue 34, second pass).
   */
  async take(endpointId: string, workerId: string, max: number, controller: AbortController): Promise<Job[]> {
    const endpoint = this.endpoint(endpointId);
    await this.liveness.seen(endpoint, workerId);
    if (this.closing.signal.aborted) controller.abort();
    const whileAlive = this.liveness.holdTake(endpointId, workerId, controller);
    const stopHolding = this.#directTakes.add(controller);
    try {
      const jobs = await endpoint.take(workerId, max, controller.signal);
      if (jobs.length > 0) this.tookJobs(endpointId, workerId, jobs);
      return jobs;
    } finally {
      stopHolding();
      whileAlive.release();
    }
  }

  /**
   * The take that rides on a job-done (`&take=N`, job/take-on-done.ts): up to `max` jobs
   * queued now, without waiting (the endpoint's take with its signal already aborted: it
   * takes what is queued, or parks nowhere, and skips the store while it knows the queue
   * empty); none while draining. Handed out as job-take hands them out (tookJobs). A store
   * error answers none, logged: the result stands, and the worker takes as usual.
   */
  async takeNow(endpointId: string, workerId: string, max: number, log: Pick<FastifyBaseLogger, 'warn'>): Promise<Job[]> {
    try {
      const jobs = await this.endpoint(endpointId).take(workerId, max, NO_WAIT);
      if (jobs.length > 0) this.tookJobs(endpointId, workerId, jobs);
      return jobs;
    } catch (error) {
      log.warn({ err: error, workerId }, 'the take on a job-done failed: answered without jobs');
      return [];
    }
  }

  /** The harness's clock (long polls are bounded on it). */
  get clock(): Harness['clock'] {
    return this.#harness.clock;
  }

  /**
   * job-done: a result or progress (its body as text); answers the reply body, throws what the route answers as an error.
   * `attemptOf(what)`: the post's attempt, read once the body says whether it is a `result` or `progress`.
   */
  async done(
    endpointId: string,
    workerId: string,
    jobId: string,
    text: unknown,
    attemptOf: (what: string) => number | undefined,
    log: WorkerApiLog,
  ): Promise<DirectAnswer> {
    // An empty body is refused (400, the job left running), as the platform answers 400 to a
    // job-done post it cannot read; the reference worker does not retry a 4xx. It used to
    // end the job COMPLETED with no output. `{}` (a handler that returned nothing) still does.
    if (bodyTooDeep(text) && !looksLikeProgress(text)) return this.#failTooDeep(endpointId, workerId, jobId, attemptOf('result'), log);
    const body = parseJsonObject(DoneBodySchema, text, 'job-done', { emptyIs: 'refused' });
    if (body.status !== 'IN_PROGRESS') checkResultKeys(body);
    const endpoint = this.endpoint(endpointId);
    await this.liveness.seen(endpoint, workerId);
    const attempt = attemptOf(body.status === 'IN_PROGRESS' ? 'progress' : 'result');
    if (body.status === 'IN_PROGRESS') {
      const ack = await endpoint.postProgress(jobId, workerId, body.output, attempt);
      if (!ack.applied && ack.reason === 'stale_attempt') await this.#refuseStale(log, endpoint, jobId, attempt, 'progress', workerId);
      return { acknowledged: true, applied: ack.applied };
    }
    const ack = await endpoint.complete(jobId, workerId, resultOf(body, workerId), attempt);
    if (!ack.applied && ack.reason === 'stale_attempt') await this.#refuseStale(log, endpoint, jobId, attempt, 'result', workerId);
    if (!ack.applied) log.info({ workerId, jobId, ...ack }, 'job-done acknowledged and ignored');
    if (body.stopPod === true) {
      log.info({ workerId, jobId }, 'worker asked to be recycled (stopPod); the harness does not stop processes');
      this.#events.onStopPod?.({ endpointId, workerId, jobId });
    }
    this.#events.onResult?.({ endpointId, workerId, jobId, ack });
    return { acknowledged: true, ...ack };
  }

  /** job-stream: one chunk (its body as text); answers the reply body, throws what the route answers as an error. */
  async stream(
    endpointId: string,
    workerId: string,
    jobId: string,
    text: unknown,
    attemptOf: () => number | undefined,
    log: WorkerApiLog,
  ): Promise<DirectAnswer> {
    if (isStreamBatch(text)) return this.#streamBatch(endpointId, workerId, jobId, parseStreamBatch(text), attemptOf, log);
    const body = parseJsonObject(StreamBodySchema, text, 'job-stream');
    const endpoint = this.endpoint(endpointId);
    await this.liveness.seen(endpoint, workerId);
    const attempt = attemptOf();
    const chunk = body.metrics !== undefined ? { output: body.output, metrics: body.metrics } : { output: body.output };
    // The store drops a chunk whose metrics.stream_index the job already has: a post retried after a lost answer.
    const ack = await endpoint.postChunk(jobId, workerId, chunk, attempt);
    if (ack.applied) return { acknowledged: true, applied: true };
    if (ack.reason === 'stale_attempt') await this.#refuseStale(log, endpoint, jobId, attempt, 'stream chunk', workerId);
    if (ack.reason === 'ahead') throw streamIndexAhead(jobId, attempt, body.metrics?.stream_index, ack.expected);
    return { acknowledged: true, applied: false, reason: ack.reason === 'duplicate' ? 'duplicate' : 'not_held_by_worker' };
  }

  /**
   * job-stream in the batch form (stream-batch.ts): each chunk stored in turn, as its own
   * post would be (held while it is early, a repeated index dropped as a retried post's);
   * answered once all are, so the ack covers the whole batch and a retry stores only what
   * is missing. A chunk refused as stale (409) or too far ahead (400) ends the post with
   * that error, the chunks before it stored; one the worker no longer holds ends it acknowledged.
   */
  async #streamBatch(
    endpointId: string,
    workerId: string,
    jobId: string,
    chunks: readonly StreamChunk[],
    attemptOf: () => number | undefined,
    log: WorkerApiLog,
  ): Promise<DirectAnswer> {
    const endpoint = this.endpoint(endpointId);
    await this.liveness.seen(endpoint, workerId);
    const attempt = attemptOf();
    let stored = 0;
    let duplicates = 0;
    for (const chunk of chunks) {
      const ack = await endpoint.postChunk(jobId, workerId, chunk, attempt);
      if (ack.applied) stored++;
      else if (ack.reason === 'duplicate') duplicates++;
      else {
        if (ack.reason === 'ahead') throw streamIndexAhead(jobId, attempt, chunk.metrics?.stream_index, ack.expected);
        if (ack.reason === 'stale_attempt') await this.#refuseStale(log, endpoint, jobId, attempt, 'stream chunk', workerId);
        return { acknowledged: true, applied: false, reason: 'not_held_by_worker', chunks: chunks.length, stored, duplicates };
      }
    }
    return stored > 0
      ? { acknowledged: true, applied: true, chunks: chunks.length, stored, duplicates }
      : { acknowledged: true, applied: false, reason: 'duplicate', chunks: chunks.length, stored, duplicates };
  }

  /** The stops waiting for this worker, once some are or `signal` ends; undefined when none came. */
  async nextStops(endpointId: string, workerId: string, signal: AbortSignal): Promise<StopBatch | undefined> {
    let batch = this.#stops.drain(endpointId, workerId);
    while (batch === undefined && !signal.aborted) {
      await this.#stops.wait(endpointId, workerId, signal);
      batch = this.#stops.drain(endpointId, workerId);
    }
    if (batch !== undefined) this.#events.onStopDelivered?.({ endpointId, workerId, ...batch });
    return batch;
  }

  /** A heartbeat: the worker is alive (or reports a failed start-up check); jobs missing from it or stray in it are dealt with. */
  async ping(endpointId: string, workerId: string, query: PingQuery, log: FastifyBaseLogger): Promise<void> {
    const endpoint = this.endpoint(endpointId);
    // A worker first heard from by its heartbeat, before any job-take, is in its start-up phase (init).
    const firstHeard = (await endpoint.workers.get(workerId)) === undefined;
    await this.liveness.seen(endpoint, workerId);
    if (query.status === 'unhealthy') {
      const check = query.check ?? 'unknown';
      const reason = (query.reason ?? '').slice(0, 256);
      log.warn({ workerId, check, reason }, 'worker reported a failed start-up check');
      this.#events.onUnhealthy?.({ endpointId, workerId, check, reason });
      await this.liveness.declareGone(endpoint, workerId, 'unhealthy');
      return;
    }
    const jobIds = query.job_id === undefined ? [] : query.job_id.split(',').filter((id) => id !== '');
    if (firstHeard && jobIds.length === 0) await endpoint.workers.touch(workerId, { initializing: true });
    else if (jobIds.length > 0) await endpoint.workers.markReady(workerId);
    this.#events.onPing?.({ endpointId, workerId, jobIds, ...(query.runpod_version !== undefined ? { version: query.runpod_version } : {}) });
    const { requeued: lost, stray } = await this.liveness.reconcile(endpoint, workerId, jobIds);
    if (lost.length > 0) {
      log.warn({ workerId, jobIds: lost }, 'jobs handed to this worker are missing from its heartbeat (their job-take answer was lost): back in the queue');
      this.#events.onJobsLost?.({ endpointId, workerId, requeued: lost });
    }
    // Its heartbeat lists jobs that no longer run with it: their stop may have been missed (stops are events, not stored).
    for (const { jobId, reason, attempt } of stray) this.#stops.recordOnce(endpointId, workerId, jobId, reason, attempt);
    if (stray.length > 0) log.debug({ workerId, stray }, 'jobs listed in the heartbeat no longer run with this worker: stopped unless a stop was already sent');
  }

  #armPrune(): void {
    if (this.#pruneTimer !== undefined || this.#closed) return;
    this.#pruneTimer = this.#harness.clock.setTimer(this.#pruneEveryMs, () => {
      this.#pruneTimer = undefined;
      this.#stops.prune();
      if (this.#stops.holdsStops) this.#armPrune();
    });
  }

  #onGone(gone: GoneWorker): void {
    this.#log.warn(gone, gone.requeued.length > 0 ? 'worker gone: its jobs are back in the queue' : 'worker gone');
    // Should it come back after all (a network split), it must stop what others now run.
    const endpoint = this.#harness.findEndpoint(gone.endpointId);
    for (const jobId of gone.requeued) if (endpoint) this.#stops.record(gone.endpointId, gone.workerId, jobId, 'cancelled');
    this.#events.onWorkerGone?.({ ...gone, requeued: [...gone.requeued] });
  }

  /** The store refused a post as from a stale attempt: answer SW_STALE_ATTEMPT (409) with the job's current attempt. */
  async #refuseStale(log: WorkerApiLog, endpoint: EndpointJobs, jobId: string, attempt: number | undefined, what: string, workerId: string): Promise<void> {
    const record = await endpoint.find(jobId);
    if (record === undefined || attempt === undefined) return;
    log.debug({ jobId, attempt, currentAttempt: record.attempt }, `${what} of a stale attempt refused`);
    this.#events.onStaleAttempt?.({ endpointId: endpoint.id, workerId, jobId, attempt, currentAttempt: record.attempt, what });
    throw staleAttemptError(record, attempt, what);
  }

  /**
   * A result nested too deep to store or answer (a worker other than ours, which checks its
   * output's depth itself): the job ends FAILED with the reason, instead of staying
   * IN_PROGRESS until its timeout while the worker has moved on; the post is answered 400.
   */
  async #failTooDeep(endpointId: string, workerId: string, jobId: string, attempt: number | undefined, log: WorkerApiLog): Promise<never> {
    const endpoint = this.endpoint(endpointId);
    await this.liveness.seen(endpoint, workerId);
    const message = `The worker's job-done body nests arrays and objects more than ${MAX_JSON_DEPTH + 1} levels deep (its output at most ${MAX_JSON_DEPTH}): the result cannot be stored`;
    const error: JobErrorPayload = {
      error_type: 'SW_OUTPUT_TOO_DEEP',
      error_message: message,
      error_code: 'SW_OUTPUT_TOO_DEEP',
      hostname: 'unknown',
      worker_id: workerId,
      runtime_version: '',
    };
    const ack = await endpoint.complete(jobId, workerId, { kind: 'error', error }, attempt);
    if (!ack.applied) log.info({ workerId, jobId, ...ack }, 'too-deep job-done acknowledged and ignored');
    this.#events.onResult?.({ endpointId, workerId, jobId, ack });
    throw new ServerlessWorkerError(
      'SW_INVALID_REQUEST',
      `${message}; ${ack.applied ? 'the job ended FAILED with this reason' : 'the job was not changed (it is no longer this attempt of this worker)'}`,
      { maxDepth: MAX_JSON_DEPTH, jobFailed: ack.applied },
    );
  }
}

/** The result a job-done body carries: its error (a timeout when the worker says so by its code), else its output. */
function resultOf(body: { output?: unknown; error?: unknown }, workerId: string): JobResult {
  if (body.error !== undefined && body.error !== null && body.error !== '') {
    const error = workerErrorPayload(body.error, workerId);
    // Over HTTP only the code says that the worker timed the job out itself.
    return error.error_code === 'SW_EXECUTION_TIMEOUT' ? { kind: 'error', error, timedOut: true } : { kind: 'error', error };
  }
  return { kind: 'output', output: body.output };
}
