/**
 * @module harness/worker-api/worker-api-routes
 * The worker side of the platform, as worker-protocol.md section 1 describes it, under
 * `/v2/{endpoint_id}` (the server registers this plugin with the prefix `/v2`):
 *
 * | route | answer |
 * |---|---|
 * | `GET  job-take/{worker}?job_in_progress=` | long poll; the job as JSON, or 204 |
 * | `GET  job-take-batch/{worker}?batch_size=N` | long poll; a JSON array of at most N jobs, or 204 |
 * | `POST job-done/{worker}/{job}?isStream=&take=` | `{output}` / `{error}` ends the job (`stopPod` noted); `{status: "IN_PROGRESS", output}` is progress; with `take=N`, up to N jobs queued now in `jobs` |
 * | `POST job-stream/{worker}/{job}` | `{output, metrics?}`: one stream chunk; or `[{output, metrics}, ...]`: several (stream-batch.ts) |
 * | `GET  job-stop/{worker}` | long poll; `{jobsToStop: [...], reasons: {...}, attempts: {...}}` or 204 |
 * | `GET  ping/{worker}?job_id=&runpod_version=` | heartbeat; `status=unhealthy&check=&reason=` reports a failed start-up check |
 *
 * Results are safe to repeat: a job-done for a job that already ended (completed,
 * cancelled, timed out, expired) or that this worker no longer holds is acknowledged
 * (200) and ignored (`applied: false` with the reason; the same result again answers
 * `applied: true, repeated: true`). Each job handed out carries its `attempt`; a
 * job-done or job-stream with `?attempt=N` of an attempt that is no longer the job's
 * current one is refused: 409 SW_STALE_ATTEMPT (attempts.ts). A job-stream chunk whose `metrics.stream_index` the job already
 * has is a retried post and is stored once; one whose index is past the next expected is
 * held, unanswered, until those before it are stored (harness/core/chunk-order.ts), and
 * job-take answers say so in `x-sw-stream-order: stream_index`, so that our worker may
 * keep several chunk posts in flight (400 SW_STREAM_INDEX_AHEAD past the hold's bounds), and in
 * `x-sw-stream-batch: 64` that a post may carry up to 64 chunks as a JSON array (400
 * SW_INVALID_STREAM_BATCH for a bad item, nothing stored); and in `x-sw-take-on-done: 1` that a
 * job-done with `&take=N` answers, beside its acknowledgement, `"jobs": [...]`: up to N jobs
 * queued then, taken for the worker as job-take takes them, without waiting (takeOnDone,
 * job/take-on-done.ts; 400 SW_INVALID_REQUEST for a bad N, the result not stored). Workers that go silent are declared gone
 * (worker-liveness.ts), whatever polls they hold open, and their jobs requeued; a job a live worker leaves out of its
 * heartbeat for as long (its job-take answer was lost) is requeued alone.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type Job,
  STREAM_BATCH_HEADER,
  STREAM_ORDER_HEADER,
  STREAM_ORDER_VALUE,
  TAKE_ON_DONE_HEADER,
  TAKE_ON_DONE_VALUE,
  parseOrThrow,
  RUNTIME_VERSION,
  requestJsonText,
} from 'serverless-worker/internal';
import { apiKeyHook } from '../http/api-key.js';
import { installErrorHandler } from '../http/error-reply.js';
import { registerRoute } from '../http/route-spec.js';
import { BatchQuerySchema, PingQuerySchema } from './bodies.js';
import { attemptQuery, jobParams, takeQuery, workerParams } from './plain-params.js';
import { WORKER_ROUTES } from './worker-routes.js';
import { holdRequest } from './long-poll.js';
import { resolveWorkerApiSettings, type WorkerApiOptions } from './options.js';
import { WorkerApiCallHandler } from './worker-api-calls.js';
import { MAX_BATCH_CHUNKS } from './stream-batch.js';

/** The value of the job-take answers' STREAM_BATCH_HEADER: the most chunks one job-stream post may carry. */
const BATCH_CHUNKS_TEXT = String(MAX_BATCH_CHUNKS);

/** The post's `?attempt=`. */
function attemptOf(request: FastifyRequest, what: string): number | undefined {
  return attemptQuery(request.query, what);
}

/** Register the worker API routes; the server mounts this under the prefix /v2. */
export async function workerApiRoutes(app: FastifyInstance, options: WorkerApiOptions): Promise<void> {
  const settings = resolveWorkerApiSettings(options);
  const calls = new WorkerApiCallHandler(options.harness, settings, options.events ?? {}, app.log);
  app.addHook('preClose', async () => calls.beginClose());
  app.addHook('onClose', async () => calls.close());
  installErrorHandler(app);
  if (settings.apiKey !== undefined) app.addHook('onRequest', apiKeyHook(settings.apiKey));
  // Bodies as text whatever the content type: the Python SDK posts JSON as form-urlencoded.
  app.removeAllContentTypeParsers();
  const asText = { parseAs: 'string', bodyLimit: settings.maxBodyBytes } as const;
  const keepText = (_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void): void => done(null, body);
  app.addContentTypeParser('*', asText, keepText);
  // The same parser named for the types workers send: fastify finds a named type in its cache by the
  // header's text, where the catch-all costs a parse of the header into an object on every post (issue 46).
  app.addContentTypeParser(['application/json', 'application/x-www-form-urlencoded'], asText, keepText);
  options.direct?.bind({
    take: (endpointId, workerId, max, controller) => calls.take(endpointId, workerId, max, controller),
    done: (endpointId, workerId, jobId, body, attempt, log) => calls.done(endpointId, workerId, jobId, body, () => attempt, log),
    stream: (endpointId, workerId, jobId, body, attempt, log) => calls.stream(endpointId, workerId, jobId, body, () => attempt, log),
    ping: (endpointId, workerId, jobIds, log) => calls.ping(endpointId, workerId, { job_id: jobIds.join(','), runpod_version: RUNTIME_VERSION }, log),
    stops: (endpointId, workerId, signal) => calls.nextStops(endpointId, workerId, AbortSignal.any([signal, calls.closing.signal])),
  });
  registerRoute(app, WORKER_ROUTES.jobTake, (request, reply) => takeJobs(calls, request, reply, false));
  registerRoute(app, WORKER_ROUTES.jobTakeBatch, (request, reply) => takeJobs(calls, request, reply, true));
  registerRoute(app, WORKER_ROUTES.jobDone, async (request, reply) => {
    const { endpointId, workerId, jobId } = jobParams(request.params);
    // Read before the result is: a bad `take` refuses the post (400), the job left as it was.
    const take = settings.takeOnDone ? takeQuery(request.query) : undefined;
    const answer = await calls.done(endpointId, workerId, jobId, request.body, (what) => attemptOf(request, what), request.log);
    if (take === undefined) return reply.send(answer);
    // A worker already gone (its connection closed while the result was stored) is handed nothing.
    return doneWithJobs(calls, request, reply, answer, reply.raw.destroyed ? [] : await calls.takeNow(endpointId, workerId, take, request.log));
  });
  registerRoute(app, WORKER_ROUTES.jobStream, async (request, reply) => {
    const { endpointId, workerId, jobId } = jobParams(request.params);
    return reply.send(await calls.stream(endpointId, workerId, jobId, request.body, () => attemptOf(request, 'stream chunk'), request.log));
  });
  registerRoute(app, WORKER_ROUTES.jobStop, (request, reply) => stopPoll(calls, request, reply));
  registerRoute(app, WORKER_ROUTES.ping, async (request, reply) => {
    const { endpointId, workerId } = workerParams(request.params);
    const query = parseOrThrow(PingQuerySchema, request.query, 'SW_INVALID_REQUEST', 'ping query');
    await calls.ping(endpointId, workerId, query, request.log);
    return reply.send({});
  });
}

/** job-take and job-take-batch: a long poll for at most one job, or `batch_size`. */
async function takeJobs(calls: WorkerApiCallHandler, request: FastifyRequest, reply: FastifyReply, batch: boolean): Promise<FastifyReply> {
  const { endpointId, workerId } = workerParams(request.params);
  const max = batch ? parseOrThrow(BatchQuerySchema, request.query, 'SW_INVALID_REQUEST', 'job-take-batch query').batch_size : 1;
  const endpoint = calls.endpoint(endpointId);
  // Its arrival says the worker is alive; holding the poll open does not (worker-liveness.ts).
  // The take marks the worker ready (its start-up phase over) with its presence: no write of its own here.
  await calls.liveness.seen(endpoint, workerId);
  // Ends when the worker is declared gone too: a frozen worker's poll must not take its own requeued jobs.
  // One controller aborted by all three (the hold's end, the server's close, the worker's loss): no joined signal a take.
  const whileAlive = calls.liveness.holdTake(endpointId, workerId);
  const held = holdRequest(reply, calls.settings.longPollMs, calls.closing.signal, calls.clock, whileAlive.controller);
  try {
    const jobs = await endpoint.take(workerId, max, held.signal);
    if (jobs.length === 0) return reply.code(204).send();
    calls.tookJobs(endpointId, workerId, jobs);
    if (held.clientGone()) {
      // Rare: the socket closed between the hand-over and the answer. The worker never
      // lists these jobs in its heartbeat, so they go back to the queue (reconcile), or
      // with the worker when it is gone.
      request.log.warn({ workerId, jobIds: jobs.map((job) => job.id) }, 'jobs taken by a worker whose connection closed before the answer');
    }
    // As text: an input queued as the text received (job/raw-json.ts) goes out as it is, unparsed.
    const text = jobs.map((job) => requestJsonText(job)).join(',');
    return advertise(reply.code(200), calls.settings.takeOnDone)
      .type('application/json; charset=utf-8')
      .send(batch ? `[${text}]` : text);
  } finally {
    held.release();
    whileAlive.release();
  }
}

/** The headers of an answer that hands out jobs: how their chunks may be posted, and (when on) that a result post may take the next ones. */
function advertise(reply: FastifyReply, takeOnDone: boolean): FastifyReply {
  // Chunks are stored by metrics.stream_index whatever order their posts come in (chunk-order.ts): the worker may keep several in flight.
  reply.header(STREAM_ORDER_HEADER, STREAM_ORDER_VALUE);
  // And takes several chunks in one post, as a JSON array (stream-batch.ts).
  reply.header(STREAM_BATCH_HEADER, BATCH_CHUNKS_TEXT);
  // And hands out jobs on a job-done that asks (job/take-on-done.ts).
  if (takeOnDone) reply.header(TAKE_ON_DONE_HEADER, TAKE_ON_DONE_VALUE);
  return reply;
}

/**
 * A job-done that carried `take=N`: its acknowledgement with `"jobs": [...]`, the jobs taken
 * for it (none when none were queued), and the headers of a job-take answer.
 */
function doneWithJobs(calls: WorkerApiCallHandler, request: FastifyRequest, reply: FastifyReply, answer: object, jobs: readonly Job[]): FastifyReply {
  if (jobs.length > 0 && reply.raw.destroyed) {
    // As on job-take: the worker never lists these jobs in its heartbeat, so they go back to the queue (reconcile).
    request.log.warn({ jobIds: jobs.map((job) => job.id) }, 'jobs taken on a job-done whose connection closed before the answer');
  }
  const acknowledgement = JSON.stringify(answer);
  // As text: an input queued as the text received (job/raw-json.ts) goes out as it is, unparsed.
  const list = `"jobs":[${jobs.map((job) => requestJsonText(job)).join(',')}]`;
  const text = acknowledgement === '{}' ? `{${list}}` : `${acknowledgement.slice(0, -1)},${list}}`;
  return advertise(reply.code(200), calls.settings.takeOnDone).type('application/json; charset=utf-8').send(text);
}

/** job-stop: a long poll for the stops waiting for this worker. */
async function stopPoll(calls: WorkerApiCallHandler, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { endpointId, workerId } = workerParams(request.params);
  const endpoint = calls.endpoint(endpointId);
  // Its arrival says the worker is alive; holding the poll open does not (worker-liveness.ts).
  await calls.liveness.seen(endpoint, workerId);
  const held = holdRequest(reply, calls.settings.longPollMs, calls.closing.signal, calls.clock);
  try {
    const batch = await calls.nextStops(endpointId, workerId, held.signal);
    if (batch === undefined) return reply.code(204).send();
    return reply.send({ jobsToStop: batch.jobIds, reasons: batch.reasons, attempts: batch.attempts });
  } finally {
    held.release();
  }
}
