/**
 * @module harness/worker-api/worker-api-routes
 * The worker side of the platform, as worker-protocol.md section 1 describes it, under
 * `/v2/{endpoint_id}` (the server registers this plugin with the prefix `/v2`):
 *
 * | route | answer |
 * |---|---|
 * | `GET  job-take/{worker}?job_in_progress=` | long poll; the job as JSON, or 204 |
 * | `GET  job-take-batch/{worker}?batch_size=N` | long poll; a JSON array of at most N jobs, or 204 |
 * | `POST job-done/{worker}/{job}?isStream=` | `{output}` / `{error}` ends the job (`stopPod` noted); `{status: "IN_PROGRESS", output}` is progress |
 * | `POST job-stream/{worker}/{job}` | `{output, metrics?}`: one stream chunk |
 * | `GET  job-stop/{worker}` | long poll; `{jobsToStop: [...], reasons: {...}, attempts: {...}}` or 204 |
 * | `GET  ping/{worker}?job_id=&runpod_version=` | heartbeat; `status=unhealthy&check=&reason=` reports a failed start-up check |
 *
 * Results are safe to repeat: a job-done for a job that already ended (completed,
 * cancelled, timed out, expired) or that this worker no longer holds is acknowledged
 * (200) and ignored (`applied: false` with the reason; the same result again answers
 * `applied: true, repeated: true`). Each job handed out carries its `attempt`; a
 * job-done or job-stream with `?attempt=N` of an attempt that is no longer the job's
 * current one is refused: 409 SW_STALE_ATTEMPT (attempts.ts). A job-stream chunk whose `metrics.stream_index` the job already
 * has is a retried post and is stored once. Workers that go silent are declared gone
 * (worker-liveness.ts), whatever polls they hold open, and their jobs requeued; a job a live worker leaves out of its
 * heartbeat for as long (its job-take answer was lost) is requeued alone.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type EndpointJobs,
  type Job,
  type JobErrorPayload,
  type JobResult,
  MAX_JSON_DEPTH,
  parseOrThrow,
  ServerlessWorkerError,
  requestJsonText,
  staleAttemptError,
  type StopReason,
  type TimerHandle,
} from 'serverless-worker/internal';
import { apiKeyHook } from '../http/api-key.js';
import { installErrorHandler } from '../http/error-reply.js';
import { registerRoute } from '../http/route-spec.js';
import {
  AttemptQuerySchema,
  BatchQuerySchema,
  DoneBodySchema,
  JobParamsSchema,
  PingQuerySchema,
  StreamBodySchema,
  WorkerParamsSchema,
  bodyTooDeep,
  checkResultKeys,
  looksLikeProgress,
  parseJsonObject,
  workerErrorPayload,
} from './bodies.js';
import { WORKER_ROUTES } from './worker-routes.js';
import { holdRequest } from './long-poll.js';
import { resolveWorkerApiSettings, type WorkerApiOptions } from './options.js';
import { PendingStops } from './pending-stops.js';
import type { DirectAnswer, WorkerApiLog } from './direct-calls.js';
import { WorkerLiveness, type GoneWorker } from './worker-liveness.js';

/** Register the worker API routes; the server mounts this under the prefix /v2. */
export async function workerApiRoutes(app: FastifyInstance, options: WorkerApiOptions): Promise<void> {
  const settings = resolveWorkerApiSettings(options);
  const { harness } = options;
  const events = options.events ?? {};
  const closing = new AbortController();
  /** Takes of workers on another channel under way (takeDirect): closing aborts them, as it answers held polls. */
  const directTakes = new Set<AbortController>();
  // The prune timer runs only while stops are held: an idle harness arms none.
  const pruneEveryMs = Math.min(settings.stopRetentionMs, 60_000);
  let pruneTimer: TimerHandle | undefined;
  let pruneClosed = false;
  const armPrune = (): void => {
    if (pruneTimer !== undefined || pruneClosed) return;
    pruneTimer = harness.clock.setTimer(pruneEveryMs, () => {
      pruneTimer = undefined;
      stops.prune();
      if (stops.holdsStops) armPrune();
    });
  };
  const stops = new PendingStops(settings.stopRetentionMs, () => harness.clock.now(), armPrune);

  const onGone = (gone: GoneWorker): void => {
    app.log.warn(gone, gone.requeued.length > 0 ? 'worker gone: its jobs are back in the queue' : 'worker gone');
    // Should it come back after all (a network split), it must stop what others now run.
    const endpoint = harness.findEndpoint(gone.endpointId);
    for (const jobId of gone.requeued) if (endpoint) stops.record(gone.endpointId, gone.workerId, jobId, 'cancelled');
    events.onWorkerGone?.({ ...gone, requeued: [...gone.requeued] });
  };
  const liveness = new WorkerLiveness(harness, settings.liveness, onGone);

  // Stops for workers that reached us over HTTP wait for their job-stop poll.
  const unsubscribers: Array<() => void> = [];
  unsubscribers.push(
    harness.onEndpoint((endpoint) => {
      unsubscribers.push(
        endpoint.stopRequested.add((workerId: string, jobId: string, reason: StopReason, attempt: number) => {
          if (liveness.isKnown(endpoint.id, workerId)) stops.record(endpoint.id, workerId, jobId, reason, attempt);
        }),
      );
    }),
  );
  liveness.start();

  app.addHook('preClose', async () => {
    closing.abort(); // held polls answer now, or close() would wait for them
    for (const controller of directTakes) controller.abort();
  });
  app.addHook('onClose', async () => {
    liveness.stop();
    pruneClosed = true;
    pruneTimer?.cancel();
    for (const unsubscribe of unsubscribers.splice(0)) unsubscribe();
  });

  installErrorHandler(app);
  if (settings.apiKey !== undefined) app.addHook('onRequest', apiKeyHook(settings.apiKey));
  // Bodies as text whatever the content type: the Python SDK posts JSON as form-urlencoded.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: settings.maxBodyBytes }, (_request, body, done) => done(null, body));

  const endpointOf = (endpointId: string): EndpointJobs => harness.endpoint(endpointId);

  /** The post's `?attempt=`. */
  const attemptOf = (request: FastifyRequest, what: string): number | undefined =>
    parseOrThrow(AttemptQuerySchema, request.query, 'SW_INVALID_REQUEST', `${what} query`).attempt;

  /** The store refused a post as from a stale attempt: answer SW_STALE_ATTEMPT (409) with the job's current attempt. */
  const refuseStale = async (
    log: WorkerApiLog,
    endpoint: EndpointJobs,
    jobId: string,
    attempt: number | undefined,
    what: string,
    workerId: string,
  ): Promise<void> => {
    const record = await endpoint.find(jobId);
    if (record === undefined || attempt === undefined) return;
    log.debug({ jobId, attempt, currentAttempt: record.attempt }, `${what} of a stale attempt refused`);
    events.onStaleAttempt?.({ endpointId: endpoint.id, workerId, jobId, attempt, currentAttempt: record.attempt, what });
    throw staleAttemptError(record, attempt, what);
  };

  /** Jobs handed out: stops recorded for their earlier runs are forgotten, and the event told. */
  const tookJobs = (endpointId: string, workerId: string, jobs: readonly Job[]): void => {
    stops.forget(
      endpointId,
      workerId,
      jobs.map((job) => job.id),
    );
    events.onJobsTaken?.({ endpointId, workerId, jobs: jobs.map((job) => ({ id: job.id, attempt: job.attempt })) });
  };

  async function takeJobs(request: FastifyRequest, reply: FastifyReply, batch: boolean): Promise<FastifyReply> {
    const { endpointId, workerId } = parseOrThrow(WorkerParamsSchema, request.params, 'SW_INVALID_REQUEST', 'path');
    const max = batch ? parseOrThrow(BatchQuerySchema, request.query, 'SW_INVALID_REQUEST', 'job-take-batch query').batch_size : 1;
    const endpoint = endpointOf(endpointId);
    // Its arrival says the worker is alive; holding the poll open does not (worker-liveness.ts).
    // The take marks the worker ready (its start-up phase over) with its presence: no write of its own here.
    await liveness.seen(endpoint, workerId);
    // Ends when the worker is declared gone too: a frozen worker's poll must not take its own requeued jobs.
    // One controller aborted by all three (the hold's end, the server's close, the worker's loss): no joined signal a take.
    const whileAlive = liveness.holdTake(endpointId, workerId);
    const held = holdRequest(reply, settings.longPollMs, closing.signal, harness.clock, whileAlive.controller);
    try {
      const jobs = await endpoint.take(workerId, max, held.signal);
      if (jobs.length === 0) return reply.code(204).send();
      tookJobs(endpointId, workerId, jobs);
      if (held.clientGone()) {
        // Rare: the socket closed between the hand-over and the answer. The worker never
        // lists these jobs in its heartbeat, so they go back to the queue (reconcile), or
        // with the worker when it is gone.
        request.log.warn({ workerId, jobIds: jobs.map((job) => job.id) }, 'jobs taken by a worker whose connection closed before the answer');
      }
      // As text: an input queued as the text received (job/raw-json.ts) goes out as it is, unparsed.
      const text = jobs.map((job) => requestJsonText(job)).join(',');
      return reply
        .code(200)
        .type('application/json; charset=utf-8')
        .send(batch ? `[${text}]` : text);
    } finally {
      held.release();
      whileAlive.release();
    }
  }

  /**
   * job-take for a worker on another channel (direct-calls.ts): the caller's controller in
   * place of the held request's signal, aborted here too when the worker is declared gone
   * or the server closes. One controller per take rather than a signal joined of three
   * (AbortSignal.any): a take per job (bench/README, issue 34, second pass).
   */
  async function takeDirect(endpointId: string, workerId: string, max: number, controller: AbortController): Promise<Job[]> {
    const endpoint = endpointOf(endpointId);
    await liveness.seen(endpoint, workerId);
    if (closing.signal.aborted) controller.abort();
    const whileAlive = liveness.holdTake(endpointId, workerId, controller);
    directTakes.add(controller);
    try {
      const jobs = await endpoint.take(workerId, max, controller.signal);
      if (jobs.length > 0) tookJobs(endpointId, workerId, jobs);
      return jobs;
    } finally {
      directTakes.delete(controller);
      whileAlive.release();
    }
  }

  registerRoute(app, WORKER_ROUTES.jobTake, (request, reply) => takeJobs(request, reply, false));
  registerRoute(app, WORKER_ROUTES.jobTakeBatch, (request, reply) => takeJobs(request, reply, true));

  /** job-done: a result or progress (its body as text); answers the reply body, throws what the route answers as an error. */
  async function done(
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
    if (bodyTooDeep(text) && !looksLikeProgress(text)) return failTooDeep(endpointId, workerId, jobId, attemptOf('result'), log);
    const body = parseJsonObject(DoneBodySchema, text, 'job-done', { emptyIs: 'refused' });
    if (body.status !== 'IN_PROGRESS') checkResultKeys(body);
    const endpoint = endpointOf(endpointId);
    await liveness.seen(endpoint, workerId);
    const what = body.status === 'IN_PROGRESS' ? 'progress' : 'result';
    const attempt = attemptOf(what);
    if (body.status === 'IN_PROGRESS') {
      const ack = await endpoint.postProgress(jobId, workerId, body.output, attempt);
      if (!ack.applied && ack.reason === 'stale_attempt') await refuseStale(log, endpoint, jobId, attempt, what, workerId);
      return { acknowledged: true, applied: ack.applied };
    }
    let result: JobResult;
    if (body.error !== undefined && body.error !== null && body.error !== '') {
      const error = workerErrorPayload(body.error, workerId);
      // Over HTTP only the code says that the worker timed the job out itself.
      result = error.error_code === 'SW_EXECUTION_TIMEOUT' ? { kind: 'error', error, timedOut: true } : { kind: 'error', error };
    } else {
      result = { kind: 'output', output: body.output };
    }
    const ack = await endpoint.complete(jobId, workerId, result, attempt);
    if (!ack.applied && ack.reason === 'stale_attempt') await refuseStale(log, endpoint, jobId, attempt, what, workerId);
    if (!ack.applied) log.info({ workerId, jobId, ...ack }, 'job-done acknowledged and ignored');
    if (body.stopPod === true) {
      log.info({ workerId, jobId }, 'worker asked to be recycled (stopPod); the harness does not stop processes');
      events.onStopPod?.({ endpointId, workerId, jobId });
    }
    events.onResult?.({ endpointId, workerId, jobId, ack });
    return { acknowledged: true, ...ack };
  }

  /**
   * A result nested too deep to store or answer (a worker other than ours, which checks its
   * output's depth itself): the job ends FAILED with the reason, instead of staying
   * IN_PROGRESS until its timeout while the worker has moved on; the post is answered 400.
   */
  async function failTooDeep(endpointId: string, workerId: string, jobId: string, attempt: number | undefined, log: WorkerApiLog): Promise<never> {
    const endpoint = endpointOf(endpointId);
    await liveness.seen(endpoint, workerId);
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
    events.onResult?.({ endpointId, workerId, jobId, ack });
    throw new ServerlessWorkerError(
      'SW_INVALID_REQUEST',
      `${message}; ${ack.applied ? 'the job ended FAILED with this reason' : 'the job was not changed (it is no longer this attempt of this worker)'}`,
      {
        maxDepth: MAX_JSON_DEPTH,
        jobFailed: ack.applied,
      },
    );
  }

  /** job-stream: one chunk (its body as text); answers the reply body, throws what the route answers as an error. */
  async function stream(
    endpointId: string,
    workerId: string,
    jobId: string,
    text: unknown,
    attemptOf: () => number | undefined,
    log: WorkerApiLog,
  ): Promise<DirectAnswer> {
    const body = parseJsonObject(StreamBodySchema, text, 'job-stream');
    const endpoint = endpointOf(endpointId);
    await liveness.seen(endpoint, workerId);
    const attempt = attemptOf();
    const chunk = body.metrics !== undefined ? { output: body.output, metrics: body.metrics } : { output: body.output };
    // The store drops a chunk whose metrics.stream_index the job already has: a post retried after a lost answer.
    const ack = await endpoint.postChunk(jobId, workerId, chunk, attempt);
    if (ack.applied) return { acknowledged: true, applied: true };
    if (ack.reason === 'stale_attempt') await refuseStale(log, endpoint, jobId, attempt, 'stream chunk', workerId);
    return { acknowledged: true, applied: false, reason: ack.reason === 'duplicate' ? 'duplicate' : 'not_held_by_worker' };
  }

  options.direct?.bind({
    take: takeDirect,
    done: (endpointId, workerId, jobId, body, attempt, log) => done(endpointId, workerId, jobId, body, () => attempt, log),
    stream: (endpointId, workerId, jobId, body, attempt, log) => stream(endpointId, workerId, jobId, body, () => attempt, log),
  });

  registerRoute(app, WORKER_ROUTES.jobDone, async (request, reply) => {
    const { endpointId, workerId, jobId } = parseOrThrow(JobParamsSchema, request.params, 'SW_INVALID_REQUEST', 'path');
    return reply.send(await done(endpointId, workerId, jobId, request.body, (what) => attemptOf(request, what), request.log));
  });

  registerRoute(app, WORKER_ROUTES.jobStream, async (request, reply) => {
    const { endpointId, workerId, jobId } = parseOrThrow(JobParamsSchema, request.params, 'SW_INVALID_REQUEST', 'path');
    return reply.send(await stream(endpointId, workerId, jobId, request.body, () => attemptOf(request, 'stream chunk'), request.log));
  });

  registerRoute(app, WORKER_ROUTES.jobStop, async (request, reply) => {
    const { endpointId, workerId } = parseOrThrow(WorkerParamsSchema, request.params, 'SW_INVALID_REQUEST', 'path');
    const endpoint = endpointOf(endpointId);
    // Its arrival says the worker is alive; holding the poll open does not (worker-liveness.ts).
    await liveness.seen(endpoint, workerId);
    const held = holdRequest(reply, settings.longPollMs, closing.signal, harness.clock);
    try {
      let batch = stops.drain(endpointId, workerId);
      while (batch === undefined && !held.signal.aborted) {
        await stops.wait(endpointId, workerId, held.signal);
        batch = stops.drain(endpointId, workerId);
      }
      if (batch === undefined) return reply.code(204).send();
      events.onStopDelivered?.({ endpointId, workerId, ...batch });
      return reply.send({ jobsToStop: batch.jobIds, reasons: batch.reasons, attempts: batch.attempts });
    } finally {
      held.release();
    }
  });

  registerRoute(app, WORKER_ROUTES.ping, async (request, reply) => {
    const { endpointId, workerId } = parseOrThrow(WorkerParamsSchema, request.params, 'SW_INVALID_REQUEST', 'path');
    const query = parseOrThrow(PingQuerySchema, request.query, 'SW_INVALID_REQUEST', 'ping query');
    const endpoint = endpointOf(endpointId);
    // A worker first heard from by its heartbeat, before any job-take, is in its start-up phase (init).
    const firstHeard = (await endpoint.workers.get(workerId)) === undefined;
    await liveness.seen(endpoint, workerId);
    if (query.status === 'unhealthy') {
      const check = query.check ?? 'unknown';
      const reason = (query.reason ?? '').slice(0, 256);
      request.log.warn({ workerId, check, reason }, 'worker reported a failed start-up check');
      events.onUnhealthy?.({ endpointId, workerId, check, reason });
      await liveness.declareGone(endpoint, workerId, 'unhealthy');
      return reply.send({});
    }
    const jobIds = query.job_id === undefined ? [] : query.job_id.split(',').filter((id) => id !== '');
    if (firstHeard && jobIds.length === 0) await endpoint.workers.touch(workerId, { initializing: true });
    else if (jobIds.length > 0) await endpoint.workers.markReady(workerId);
    events.onPing?.({ endpointId, workerId, jobIds, ...(query.runpod_version !== undefined ? { version: query.runpod_version } : {}) });
    const { requeued: lost, stray } = await liveness.reconcile(endpoint, workerId, jobIds);
    if (lost.length > 0) {
      request.log.warn(
        { workerId, jobIds: lost },
        'jobs handed to this worker are missing from its heartbeat (their job-take answer was lost): back in the queue',
      );
      events.onJobsLost?.({ endpointId, workerId, requeued: lost });
    }
    // Its heartbeat lists jobs that no longer run with it: their stop may have been missed (stops are events, not stored).
    for (const { jobId, reason, attempt } of stray) stops.recordOnce(endpointId, workerId, jobId, reason, attempt);
    if (stray.length > 0)
      request.log.debug({ workerId, stray }, 'jobs listed in the heartbeat no longer run with this worker: stopped unless a stop was already sent');
    return reply.send({});
  });
}
