/**
 * @module harness/queue-api/queue-routes
 * Every route of the queue API (/v2/{endpointId}, spec 4.2), declared once: the
 * OpenAPI document lists each endpoint's copy from it (and the root copy of
 * `--serve-api`), the tests' route list is derived from it, and a test checks that the
 * server registers exactly these. Replies the routes build without a zod schema are
 * documented by the document's own components (`replyRef`).
 */
import * as z from 'zod';
import { JobRequestSchema, RUNSYNC_WAIT_MS } from 'serverless-worker/internal';
import { defineRoute, type FailureDoc } from '../http/route-spec.js';
import { EndpointParamsSchema, JobParamsSchema, RequestsQuerySchema, STREAM_WAIT_MS, StatusQuerySchema, WaitQuerySchema, msQuery } from './params.js';

export const QUEUE_PREFIX = '/v2';

const NOT_FOUND: FailureDoc = { ref: 'NotFound' };
const RATE_LIMITED = { '429': { ref: 'RateLimited' } } as const;
/** The tag is per endpoint: the document sets it. */
const base = { prefix: QUEUE_PREFIX, tag: 'queue API' } as const;

/** /stream's `wait`: its default is the server's --stream-wait (10 s unless set). */
const StreamQueryDocSchema = z.object({
  wait: msQuery('wait', STREAM_WAIT_MS).optional().describe("ms to wait for a chunk; default the server's stream wait (10000)"),
});

/** The /logs query (the launched workers' output). */
export const LogsQuerySchema = z.object({
  /** Lines to answer, the last ones; default 200. */
  limit: z.coerce.number({ error: 'limit must be a whole number from 1 to 100000' }).int().min(1).max(100_000).default(200),
  /** Only this worker's lines; default every worker of the endpoint. */
  workerId: z.string().min(1).max(256).optional(),
});

const WaitDocSchema = WaitQuerySchema.extend({ wait: WaitQuerySchema.shape.wait.describe(`ms to wait, default ${RUNSYNC_WAIT_MS.default}`) });

export const QUEUE_ROUTES = {
  run: defineRoute({
    ...base,
    method: 'POST',
    path: '/:endpointId/run',
    operationId: 'run',
    summary: 'Submit a job; answers at once with its id.',
    params: EndpointParamsSchema,
    body: JobRequestSchema,
    replyDescription: 'Queued.',
    replyRef: 'Submitted',
    failures: { '400': { ref: 'BadRequest' }, '413': { ref: 'TooLarge' }, ...RATE_LIMITED },
  }),
  runsync: defineRoute({
    ...base,
    method: 'POST',
    path: '/:endpointId/runsync',
    operationId: 'runsync',
    summary: 'Submit a job and wait for it (up to ?wait= ms).',
    description: 'When the wait elapses first, the answer has only id and status; poll /status.',
    params: EndpointParamsSchema,
    query: WaitDocSchema,
    body: JobRequestSchema,
    replyDescription: 'The job record (COMPLETED, FAILED, ...), or id and status when the wait elapsed.',
    replyRef: 'JobRecord',
    failures: { '400': { ref: 'BadRequest' }, '413': { ref: 'TooLarge' }, ...RATE_LIMITED },
  }),
  status: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/status/:jobId',
    operationId: 'status',
    summary: "A job's status and, once it ended, its output or error.",
    params: JobParamsSchema,
    query: StatusQuerySchema.extend({ ttl: StatusQuerySchema.shape.ttl.describe("Set the job's time to live to this many ms from now.") }),
    replyDescription: 'The job record.',
    replyRef: 'JobRecord',
    failures: { '404': NOT_FOUND, ...RATE_LIMITED },
  }),
  stream: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/stream/:jobId',
    operationId: 'stream',
    summary: 'Stream chunks since the previous call (long-polls up to ?wait= ms when none are unread).',
    params: JobParamsSchema,
    query: StreamQueryDocSchema,
    replyDescription: 'Status and new chunks.',
    replyRef: 'Stream',
    failures: { '404': NOT_FOUND, ...RATE_LIMITED },
  }),
  cancel: defineRoute({
    ...base,
    method: 'POST',
    path: '/:endpointId/cancel/:jobId',
    operationId: 'cancel',
    summary: 'Cancel a queued or running job.',
    params: JobParamsSchema,
    replyDescription: 'Cancelled.',
    replyRef: 'Submitted',
    failures: { '404': NOT_FOUND, '409': { description: 'The job has already ended: SW_CANCEL_NOT_ALLOWED.' }, ...RATE_LIMITED },
  }),
  statusSync: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/status-sync/:jobId',
    operationId: 'status_sync',
    summary: "A job's status, waiting up to ?wait= ms for it to end.",
    params: JobParamsSchema,
    query: WaitDocSchema,
    replyDescription: 'The job record (its end, or its status when the wait elapsed).',
    replyRef: 'JobRecord',
    failures: { '404': NOT_FOUND, ...RATE_LIMITED },
  }),
  retry: defineRoute({
    ...base,
    method: 'POST',
    path: '/:endpointId/retry/:jobId',
    operationId: 'retry',
    summary: 'Run a FAILED or TIMED_OUT job again with the same input (back at the end of the queue).',
    params: JobParamsSchema,
    replyDescription: 'Queued again.',
    replyRef: 'Submitted',
    failures: { '404': NOT_FOUND, '409': { description: 'The job is not FAILED or TIMED_OUT: SW_RETRY_NOT_ALLOWED.' }, ...RATE_LIMITED },
  }),
  purgeQueue: defineRoute({
    ...base,
    method: 'POST',
    path: '/:endpointId/purge-queue',
    operationId: 'purge_queue',
    summary: 'Remove every queued job (running ones go on).',
    params: EndpointParamsSchema,
    replyDescription: 'How many were removed.',
    replyRef: 'Purged',
    failures: RATE_LIMITED,
  }),
  requests: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/requests',
    operationId: 'requests',
    summary: 'The jobs kept, newest first (?status= comma-separated states, ?limit=).',
    params: EndpointParamsSchema,
    query: RequestsQuerySchema.extend({ status: RequestsQuerySchema.shape.status.describe('Comma-separated states, default all.') }),
    replyDescription: 'The jobs.',
    replyRef: 'Requests',
    failures: RATE_LIMITED,
  }),
  health: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/health',
    operationId: 'health',
    summary: 'Job and worker counts of the endpoint.',
    params: EndpointParamsSchema,
    replyDescription: 'Counts.',
    replyRef: 'Health',
    failures: RATE_LIMITED,
  }),
  logs: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/logs',
    operationId: 'logs',
    summary: "The last lines the endpoint's launched workers printed (?limit=, ?workerId=); empty where the harness launched none.",
    params: EndpointParamsSchema,
    query: LogsQuerySchema,
    replyDescription: 'The lines, oldest first.',
    replyRef: 'Logs',
  }),
};

/** The queue API's routes in the order the document lists them. */
export const QUEUE_API_ROUTES = Object.freeze(Object.values(QUEUE_ROUTES));

/** The routes `--serve-api` also serves at the root (http/root-alias.ts): the platform's local API has no /logs. */
export const ROOT_QUEUE_ROUTES = Object.freeze(QUEUE_API_ROUTES.filter((route) => route !== QUEUE_ROUTES.logs));
