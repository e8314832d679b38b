/**
 * @module harness/dashboard/routes
 * The dashboard's routes under `/ui`. The page and its modules are public (they hold
 * no data; the page asks for the key); every data route sits behind the server's API
 * key like any other route and answers 401 without it. Each group of routes is a function
 * below; what they accept is in route-queries.ts, the logs' and scale events' answers in
 * logs-view.ts.
 *
 * | route | answer |
 * |---|---|
 * | `GET /ui`, `/ui/static/{file}`, `/ui/vendor/{file}` | the page, its modules and styles (public) |
 * | `GET /ui/api/overview` | endpoints, workers, GPU, panels, chart history, the submit form's example |
 * | `GET /ui/api/endpoints/{id}/jobs?state=&q=&worker=&kind=&error=&from=&to=&text=&order=&offset=&limit=` | a page of jobs, newest (or oldest) first, filtered |
 * | `GET /ui/api/jobs?endpoint=&state=&…&offset=&limit=` | a page of jobs across endpoints (`endpoint`: comma-separated ids, default all), the same filters, each row with its endpoint (all-jobs.ts) |
 * | `GET /ui/api/jobs/matching?endpoint=&state=&…` | every job the filter matches (at most 10 000): what a bulk action would touch |
 * | `POST /ui/api/jobs/bulk` `{ action: "cancel" \| "retry", jobs: [{ endpointId, id }] }` | cancel or retry those jobs; answers done and refused (with code and message) |
 * | `GET /ui/api/endpoints/{id}/jobs/{jobId}` | one job: its large values as previews with their size (value-preview.ts) |
 * | `GET /ui/api/endpoints/{id}/jobs/{jobId}/values/{part}?download=1` | one of its values whole: `input`, `output`, `error` (JSON; null when none), `chunks` (`{ from, outputs }`: the unread chunks); `download=1` answers it as a file |
 * | `GET /ui/api/endpoints/{id}/jobs/{jobId}/attempts` | the job's attempts: worker, times, how each ended |
 * | `GET /ui/api/scale-events?endpoint=&max=` | the launcher's scale events, oldest first; a crash or exit with its worker's last stderr lines |
 * | `GET /ui/api/logs?endpoint=&worker=&job=&max=` | log lines, oldest first: the launched workers' (launcher capture) of one worker, or those naming a job with the lines an in-process worker logged for it |
 * | `GET /ui/api/events?endpoint=&job=` | Server-Sent Events (see live-hub.ts) |
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { type Harness, parseOrThrow, ServerlessWorkerError } from 'serverless-worker/internal';
import type { LaunchedWorkersView } from '../launcher/launched-workers-view.js';
import { EndpointParamsSchema, JobParamsSchema, parseRequestPart } from '../queue-api/params.js';
import { registerRoute } from '../http/route-spec.js';
import { DASHBOARD_ROUTES } from './dashboard-routes.js';
import type { LiveHub } from './live-hub.js';
import type { ChunkValues, LogsView, OverviewView, ScaleEventsView } from './page-views.js';
import type { DashboardSettings } from './settings.js';
import type { StaticFiles, StaticFile } from './static-files.js';
import { jobDetail, jobsPage } from './views.js';
import { allJobsPage, applyBulk, matchingJobs } from './all-jobs.js';
import type { WebhookLog } from './webhook-log.js';
import type { AttemptLog } from './attempt-log.js';
import type { GpuJobLog } from './gpu-job-log.js';
import { jobAttemptsView } from './attempt-view.js';
import { inputExample } from './input-example.js';
import { jobRunner } from './job-runner.js';
import { jsonText } from './value-preview.js';
import { logsView, scaleEventsView } from './logs-view.js';
import {
  AllJobsQuerySchema,
  BulkBodySchema,
  EventsQuerySchema,
  FileParamsSchema,
  JobsQuerySchema,
  listQueryOf,
  LogsQuerySchema,
  ScaleEventsQuerySchema,
  ValueParamsSchema,
  ValueQuerySchema,
} from './route-queries.js';

export { JOBS_PAGE_LIMIT } from './route-queries.js';

export interface DashboardRouteContext {
  readonly harness: Harness;
  readonly settings: DashboardSettings;
  readonly hub: LiveHub;
  readonly files: StaticFiles;
  readonly webhookLog: WebhookLog;
  readonly attemptLog: AttemptLog;
  readonly gpuJobLog: GpuJobLog;
  /** Endpoints whose worker publishes an input schema (the submit form's example when there is no test input). */
  readonly endpointInputs?: Readonly<Record<string, { readonly jsonSchema?: Readonly<Record<string, unknown>> | undefined }>> | undefined;
  readonly authenticated: boolean;
  readonly version: string;
  /** Workers the harness runs itself (the launcher): scale events and logs; default none. */
  readonly launchedWorkers?: LaunchedWorkersView | undefined;
}

/** Per endpoint with an input schema: an example job request made from it. */
function schemaExamples(inputs: NonNullable<DashboardRouteContext['endpointInputs']>): Record<string, { input: unknown }> {
  const examples: Record<string, { input: unknown }> = {};
  for (const [endpointId, spec] of Object.entries(inputs)) {
    if (spec.jsonSchema) examples[endpointId] = { input: inputExample(spec.jsonSchema) };
  }
  return examples;
}

function sendFile(reply: FastifyReply, file: StaticFile | undefined, what: string): FastifyReply {
  if (!file) throw new ServerlessWorkerError('SW_ROUTE_NOT_FOUND', `No dashboard file ${what}`, { path: what });
  return reply
    .header('content-type', file.contentType)
    .header('cache-control', 'no-cache')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .send(file.body);
}

function jobNotFound(endpointId: string, jobId: string): ServerlessWorkerError {
  return new ServerlessWorkerError('SW_JOB_NOT_FOUND', `Job ${jobId} not found on endpoint ${endpointId}`, { jobId, endpointId });
}

/** The page, its modules and styles: public (they hold no data; the page asks for the key). */
function pageRoutes(app: FastifyInstance, files: StaticFiles): void {
  registerRoute(app, DASHBOARD_ROUTES.page, async (_request, reply) => sendFile(reply, await files.page('index.html'), 'index.html'));
  registerRoute(app, DASHBOARD_ROUTES.static, async (request, reply) => {
    const { file } = parseRequestPart(FileParamsSchema, request.params, 'path');
    return sendFile(reply, await files.page(file), file);
  });
  registerRoute(app, DASHBOARD_ROUTES.vendor, async (request, reply) => {
    const { file } = parseRequestPart(FileParamsSchema, request.params, 'path');
    return sendFile(reply, await files.vendor(file), file);
  });
}

/** The overview: endpoints, workers, GPU, panels, chart history, the submit form's example. */
function overviewRoute(app: FastifyInstance, context: DashboardRouteContext): void {
  const { harness, hub, settings } = context;
  const inputExamples = schemaExamples(context.endpointInputs ?? {});
  registerRoute(app, DASHBOARD_ROUTES.overview, async (): Promise<OverviewView> => ({
    ...(await hub.snapshot()),
    series: hub.series.points(),
    sampleIntervalMs: settings.sampleIntervalMs,
    historyMinutes: settings.historyMinutes,
    testInput: settings.testInput ?? { input: {} },
    /** Where the form's example comes from: the worker's test input, else each endpoint's input schema. */
    testInputGiven: settings.testInput !== undefined,
    inputExamples,
    authenticated: context.authenticated,
    autoCreateEndpoints: harness.autoCreateEndpoints,
    /** Endpoints made on first use, with when (a misspelt id in a client shows here). */
    createdOnUse: [...harness.createdOnUse].map(([id, at]) => ({ id, at })),
    version: context.version,
  }));
}

/** Pages of jobs (one endpoint's, or across endpoints), every job a filter matches, and the bulk actions on them. */
function jobListRoutes(app: FastifyInstance, harness: Harness): void {
  registerRoute(app, DASHBOARD_ROUTES.endpointJobs, async (request) => {
    const { endpointId } = parseRequestPart(EndpointParamsSchema, request.params, 'path');
    const query = parseRequestPart(JobsQuerySchema, request.query, 'query string');
    const endpoint = harness.findEndpoint(endpointId);
    if (!endpoint) return { endpointId, total: 0, offset: query.offset, limit: query.limit, jobs: [] };
    return jobsPage(endpoint, listQueryOf(query));
  });
  registerRoute(app, DASHBOARD_ROUTES.jobs, async (request) => {
    const query = parseRequestPart(AllJobsQuerySchema, request.query, 'query string');
    return allJobsPage(harness, query.endpoint, listQueryOf(query));
  });
  registerRoute(app, DASHBOARD_ROUTES.jobsMatching, async (request) => {
    const query = parseRequestPart(AllJobsQuerySchema, request.query, 'query string');
    return matchingJobs(harness, query.endpoint, listQueryOf(query));
  });
  registerRoute(app, DASHBOARD_ROUTES.jobsBulk, async (request) => {
    const body = parseOrThrow(BulkBodySchema, request.body ?? {}, 'SW_INVALID_REQUEST', 'body');
    return applyBulk(harness, body.action, body.jobs);
  });
}

/** One job: its detail, its large values as previews (value-preview.ts). */
function jobDetailRoute(app: FastifyInstance, context: DashboardRouteContext): void {
  const { harness } = context;
  registerRoute(app, DASHBOARD_ROUTES.job, async (request) => {
    const { endpointId, jobId } = parseRequestPart(JobParamsSchema, request.params, 'path');
    const endpoint = harness.findEndpoint(endpointId);
    const job = await endpoint?.find(jobId);
    const pending = await endpoint?.peekStream(jobId);
    if (!job) throw jobNotFound(endpointId, jobId);
    const runner = await jobRunner(job, { harness, local: context.settings.localWorkers, launched: context.launchedWorkers });
    return jobDetail(job, pending ?? [], context.webhookLog.forJob(jobId), context.gpuJobLog.forJob(endpointId, jobId, runner));
  });
}

/** One job's attempts: worker, times, how each ended. */
function jobAttemptsRoute(app: FastifyInstance, context: DashboardRouteContext): void {
  const { harness } = context;
  registerRoute(app, DASHBOARD_ROUTES.jobAttempts, async (request) => {
    const { endpointId, jobId } = parseRequestPart(JobParamsSchema, request.params, 'path');
    // awaited: the job store's reads become asynchronous (issue 16).
    const job = await harness.findEndpoint(endpointId)?.find(jobId);
    if (!job) throw jobNotFound(endpointId, jobId);
    const scaleEvents = context.launchedWorkers?.scaleEvents?.(endpointId) ?? [];
    const { attemptLog } = context;
    return jobAttemptsView(job, attemptLog.forJob(endpointId, jobId), scaleEvents, harness.clock.now(), attemptLog.limits, attemptLog.evictedJobs);
  });
}

/** A job's value whole, on demand: its JSON text is sent as it is, never wrapped in a live message. */
function jobValueRoute(app: FastifyInstance, harness: Harness): void {
  registerRoute(app, DASHBOARD_ROUTES.jobValue, async (request, reply) => {
    const { endpointId, jobId, part } = parseRequestPart(ValueParamsSchema, request.params, 'path');
    const { download } = parseRequestPart(ValueQuerySchema, request.query, 'query string');
    const endpoint = harness.findEndpoint(endpointId);
    const job = await endpoint?.find(jobId);
    if (!endpoint || !job) throw jobNotFound(endpointId, jobId);
    let value: unknown;
    if (part === 'chunks') {
      const unread = (await endpoint.peekStream(jobId)) ?? [];
      value = { from: Math.max(0, job.chunkCount - unread.length), outputs: unread.map((chunk) => chunk.output) } satisfies ChunkValues;
    } else {
      value = part === 'input' ? job.request.input : part === 'output' ? job.output : job.error;
    }
    if (download === '1') reply.header('content-disposition', `attachment; filename="${jobId.replace(/[^A-Za-z0-9._-]/g, '_')}-${part}.json"`);
    return reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(jsonText(value ?? null));
  });
}

/** The launcher's scale events, and log lines of a worker or a job (logs-view.ts). */
function logRoutes(app: FastifyInstance, context: DashboardRouteContext): void {
  registerRoute(app, DASHBOARD_ROUTES.scaleEvents, async (request): Promise<ScaleEventsView> => {
    const query = parseRequestPart(ScaleEventsQuerySchema, request.query, 'query string');
    return scaleEventsView(query, context.launchedWorkers);
  });
  registerRoute(app, DASHBOARD_ROUTES.logs, async (request): Promise<LogsView> => {
    const query = parseRequestPart(LogsQuerySchema, request.query, 'query string');
    return logsView(query, context.launchedWorkers, context.settings.jobLogs);
  });
}

/** Server-Sent Events (live-hub.ts): the overview's, or one job's. */
function eventsRoute(app: FastifyInstance, hub: LiveHub): void {
  registerRoute(app, DASHBOARD_ROUTES.events, async (request, reply) => {
    const query = parseRequestPart(EventsQuerySchema, request.query, 'query string');
    if ((query.job === undefined) !== (query.endpoint === undefined)) {
      throw new ServerlessWorkerError('SW_INVALID_REQUEST', 'Invalid query string: job and endpoint go together (both or neither)', {
        endpoint: query.endpoint ?? null,
        job: query.job ?? null,
      });
    }
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    reply.raw.flushHeaders();
    await hub.connect(reply.raw, query.job !== undefined && query.endpoint !== undefined ? { endpointId: query.endpoint, jobId: query.job } : undefined);
  });
}

/** Every route of the table above on `app`. */
export function registerDashboardRoutes(app: FastifyInstance, context: DashboardRouteContext): void {
  pageRoutes(app, context.files);
  overviewRoute(app, context);
  jobListRoutes(app, context.harness);
  jobDetailRoute(app, context);
  jobValueRoute(app, context.harness);
  jobAttemptsRoute(app, context);
  logRoutes(app, context);
  eventsRoute(app, context.hub);
}
