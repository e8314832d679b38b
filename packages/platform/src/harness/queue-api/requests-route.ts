/**
 * @module harness/queue-api/requests-route
 * GET /requests: the endpoint's recent jobs, newest first. The spec shows only this
 * route's rate limit, so the shape is ours: a summary per job (no input or output,
 * which can be megabytes; read one job with /status), filtered by `status` and cut at
 * `limit`.
 *
 *     GET /v2/{endpoint}/requests?status=IN_QUEUE,IN_PROGRESS&limit=20
 *     { "endpointId": "local", "total": 2, "limit": 20, "requests": [RequestSummary, ...] }
 */
import type { FastifyInstance } from 'fastify';
import { type JobStatus, type StoredJob, toJobView } from 'serverless-worker/internal';
import { operationConfig } from '../http/route-config.js';
import { registerRoute } from '../http/route-spec.js';
import { existingEndpointOf, type QueueApiContext } from './context.js';
import { RequestsQuerySchema, parseRequestPart } from './params.js';
import { QUEUE_ROUTES } from './queue-routes.js';

/** One job in the /requests listing. */
export interface RequestSummary {
  id: string;
  status: JobStatus;
  /** How it was submitted: `run` (async) or `runsync` (also OpenAI calls). */
  kind: 'run' | 'runsync';
  /** ISO 8601 times: submitted, started running, ended (absent until they happen). */
  submittedAt: string;
  startedAt?: string;
  endedAt?: string;
  /** ms waited in the queue, ms run (as /status shows them). */
  delayTime?: number;
  executionTime?: number;
  /** Times the job went back to the queue (/retry, or its worker vanished). */
  retries: number;
  /** The worker holding it, while IN_PROGRESS. */
  workerId?: string;
  /** ISO 8601 time its ttl deletes it. */
  expiresAt: string;
  /** Stream chunks posted so far, and how many of them /stream has not handed out yet. */
  chunks: number;
  unreadChunks: number;
  /** Whether a webhook (or webhookV2) will be called when it ends. */
  webhook: boolean;
  /** The OpenAI route, for jobs made by /openai/v1/... */
  openaiRoute?: string;
  /** For FAILED and TIMED_OUT jobs: the error's type and message. */
  errorType?: string;
  errorMessage?: string;
}

export interface RequestsListing {
  endpointId: string;
  /** Jobs kept by the endpoint that match the status filter (before `limit`). */
  total: number;
  limit: number;
  /** Newest submission first. */
  requests: RequestSummary[];
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function summarizeJob(job: StoredJob): RequestSummary {
  const view = toJobView(job);
  const summary: RequestSummary = {
    id: job.id,
    status: job.status,
    kind: job.sync ? 'runsync' : 'run',
    submittedAt: iso(job.submittedAt),
    ...(job.startedAt !== undefined ? { startedAt: iso(job.startedAt) } : {}),
    ...(job.endedAt !== undefined ? { endedAt: iso(job.endedAt) } : {}),
    ...(view.delayTime !== undefined ? { delayTime: view.delayTime } : {}),
    ...(view.executionTime !== undefined ? { executionTime: view.executionTime } : {}),
    retries: job.retries,
    ...(job.workerId !== undefined ? { workerId: job.workerId } : {}),
    expiresAt: iso(job.expiresAt),
    chunks: job.chunkCount,
    unreadChunks: job.unreadChunkCount,
    webhook: job.request.webhook !== undefined || job.request.webhookV2 !== undefined,
  };
  const route = job.request.input.openai_route;
  if (typeof route === 'string') summary.openaiRoute = route;
  if (job.error !== undefined) {
    summary.errorType = job.error.error_type;
    summary.errorMessage = job.error.error_message;
  }
  return summary;
}

export function registerRequestsRoute(app: FastifyInstance, context: QueueApiContext): void {
  registerRoute(app, QUEUE_ROUTES.requests, { config: operationConfig('requests') }, async (request): Promise<RequestsListing> => {
    const { endpointId, endpoint } = await existingEndpointOf(context, request.params);
    const { status, limit } = parseRequestPart(RequestsQuerySchema, request.query, 'query string');
    // An endpoint no job was sent to has none, and a read does not create it.
    if (!endpoint) return { endpointId, total: 0, limit, requests: [] };
    const page = await endpoint.list({ states: status, offset: 0, limit });
    return { endpointId: endpoint.id, total: page.total, limit, requests: page.jobs.map(summarizeJob) };
  });
}
