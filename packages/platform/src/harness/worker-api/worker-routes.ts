/**
 * @module harness/worker-api/worker-routes
 * Every route of the worker API (worker-protocol.md section 1, under
 * /v2/{endpointId}), declared once: the plugin registers from it and the tests' route
 * list is derived from it. The OpenAPI document leaves these out: it describes what
 * users call, and workers speak this protocol through the SDK.
 */
import { defineRoute } from '../http/route-spec.js';
import { BatchQuerySchema, JobParamsSchema, PingQuerySchema, WorkerParamsSchema } from './bodies.js';

const base = { prefix: '/v2', tag: 'worker API' } as const;

export const WORKER_ROUTES = {
  jobTake: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/job-take/:workerId',
    operationId: 'job_take',
    summary: 'Long poll for one job; 204 when none came.',
    params: WorkerParamsSchema,
    replyDescription: 'The job.',
  }),
  jobTakeBatch: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/job-take-batch/:workerId',
    operationId: 'job_take_batch',
    summary: 'Long poll for up to ?batch_size= jobs; 204 when none came.',
    params: WorkerParamsSchema,
    query: BatchQuerySchema,
    replyDescription: 'The jobs.',
  }),
  jobDone: defineRoute({
    ...base,
    method: 'POST',
    path: '/:endpointId/job-done/:workerId/:jobId',
    operationId: 'job_done',
    summary: "A job's result, or its progress.",
    params: JobParamsSchema,
    replyDescription: 'Acknowledged (applied or not, and why).',
  }),
  jobStream: defineRoute({
    ...base,
    method: 'POST',
    path: '/:endpointId/job-stream/:workerId/:jobId',
    operationId: 'job_stream',
    summary: 'One stream chunk of a job.',
    params: JobParamsSchema,
    replyDescription: 'Acknowledged.',
  }),
  jobStop: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/job-stop/:workerId',
    operationId: 'job_stop',
    summary: 'Long poll for the jobs the worker must stop; 204 when none.',
    params: WorkerParamsSchema,
    replyDescription: 'The jobs to stop, with reasons and attempts.',
  }),
  ping: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/ping/:workerId',
    operationId: 'ping',
    summary: "The worker's heartbeat (and a failed start-up check's report).",
    params: WorkerParamsSchema,
    query: PingQuerySchema,
    replyDescription: 'Acknowledged.',
  }),
};

/** The worker API's routes. */
export const WORKER_API_ROUTES = Object.freeze(Object.values(WORKER_ROUTES));
