/**
 * @module harness/dashboard/routes
 * The dashboard's routes under `/ui`. The page and its modules are public (they hold
 * no data; the page asks for the key); every data route sits behind the server's API
 * key like any other route and answers 401 without it.
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
import * as z from 'zod';
import { type Harness, JOB_STATUSES, parseOrThrow, ServerlessWorkerError } from 'serverless-worker/internal';
import type { LaunchedWorkersView } from '../launcher/launched-workers-view.js';
import { EndpointParamsSchema, JobParamsSchema, parseRequestPart } from '../queue-api/params.js';
import { registerRoute } from '../http/route-spec.js';
import { DASHBOARD_ROUTES } from './dashboard-routes.js';
import type { LiveHub } from './live-hub.js';
import { byTimeThenSeq } from '../launcher/log-order.js';
import { droppedLinesText } from '../launcher/job-lines.js';
import type { ChunkValues, LogLineView, LogsView, OverviewView, ScaleEventView, ScaleEventsView } from './page-views.js';
import type { DashboardSettings } from './settings.js';
import type { StaticFiles, StaticFile } from './static-files.js';
import { jobDetail, jobsPage, type JobsQuery } from './views.js';
import { BULK_MAX_JOBS, allJobsPage, applyBulk, matchingJobs } from './all-jobs.js';
import type { WebhookLog } from './webhook-log.js';
import type { AttemptLog } from './attempt-log.js';
import type { GpuJobLog } from './gpu-job-log.js';
import { jobAttemptsView } from './attempt-view.js';
import { inputExample } from './input-example.js';
import { jobRunner } from './job-runner.js';
import { jsonText } from './value-preview.js';

export const JOBS_PAGE_LIMIT = { min: 1, max: 500, default: 50 } as const;

const wholeText = (name: string, min: number, max: number) => {
  const error = `${name} must be a whole number from ${min} to ${max}`;
  return z
    .string({ error })
    .regex(/^\d{1,9}$/, { error })
    .transform(Number)
    .pipe(z.number().min(min, { error }).max(max, { error }));
};

/** A time as ISO 8601 (2026-01-01T10:00:00Z) or epoch ms, answered as epoch ms. */
const isoTime = (name: string) => {
  const error = `${name} must be an ISO 8601 time (2026-01-01T10:00:00Z) or epoch milliseconds`;
  return z
    .string({ error })
    .transform((text) => (/^\d{1,15}$/.test(text) ? Number(text) : Date.parse(text)))
    .pipe(z.number({ error }).refine((ms) => Number.isFinite(ms), { error }));
};

const JobsQuerySchema = z.object({
  /** Comma-separated states; default all. */
  state: z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((s) => s.trim().toUpperCase())
        .filter((s) => s.length > 0),
    )
    .pipe(z.array(z.enum(JOB_STATUSES, { error: `state must be a comma-separated list of ${JOB_STATUSES.join(', ')}` })))
    .optional(),
  q: z.string().max(200, { error: 'q (id search) must be at most 200 characters' }).optional(),
  worker: z.string().min(1).max(200, { error: 'worker must be at most 200 characters' }).optional(),
  kind: z.enum(['run', 'runsync'], { error: 'kind must be run or runsync' }).optional(),
  error: z.string().min(1).max(200, { error: 'error (an error code) must be at most 200 characters' }).optional(),
  from: isoTime('from').optional(),
  to: isoTime('to').optional(),
  text: z.string().max(200, { error: 'text (searched in input, output and error) must be at most 200 characters' }).optional(),
  order: z
    .enum(['newest', 'oldest', 'slowest', 'waited'], { error: 'order must be newest, oldest, slowest (longest execution) or waited (longest queue wait)' })
    .default('newest'),
  offset: wholeText('offset', 0, 100_000_000).default(0),
  limit: wholeText('limit', JOBS_PAGE_LIMIT.min, JOBS_PAGE_LIMIT.max).default(JOBS_PAGE_LIMIT.default),
});

/** The endpoints a list across endpoints covers: comma-separated ids; default all. */
const EndpointListSchema = z
  .string()
  .transform((text) =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  )
  .pipe(z.array(EndpointParamsSchema.shape.endpointId).max(100, { error: 'endpoint must name at most 100 endpoints' }))
  .optional();

const AllJobsQuerySchema = JobsQuerySchema.extend({ endpoint: EndpointListSchema });

const BulkBodySchema = z.object({
  action: z.enum(['cancel', 'retry'], { error: 'action must be cancel or retry' }),
  jobs: z
    .array(z.object({ endpointId: EndpointParamsSchema.shape.endpointId, id: JobParamsSchema.shape.jobId }), {
      error: 'jobs must be a list of { endpointId, id }',
    })
    .max(BULK_MAX_JOBS, { error: `jobs must list at most ${BULK_MAX_JOBS} jobs` }),
});

/** The store's list query for the jobs routes' query string. */
function listQueryOf(query: z.infer<typeof JobsQuerySchema>): JobsQuery {
  return {
    states: query.state,
    search: query.q,
    workerId: query.worker,
    kind: query.kind,
    errorCode: query.error,
    submittedFrom: query.from,
    submittedTo: query.to,
    text: query.text,
    order: query.order,
    offset: query.offset,
    limit: query.limit,
  };
}

const ValueParamsSchema = JobParamsSchema.extend({
  part: z.enum(['input', 'output', 'error', 'chunks'], { error: 'part must be one of input, output, error, chunks' }),
});

const ValueQuerySchema = z.object({
  download: z.enum(['0', '1'], { error: 'download must be 0 or 1' }).default('0'),
});

const FileParamsSchema = z.object({ file: z.string().min(1).max(100, { error: 'file name must be at most 100 characters' }) });

const EventsQuerySchema = z.object({
  endpoint: EndpointParamsSchema.shape.endpointId.optional(),
  job: JobParamsSchema.shape.jobId.optional(),
});

const LogsQuerySchema = z.object({
  endpoint: EndpointParamsSchema.shape.endpointId,
  worker: z.string().min(1).max(200, { error: 'worker must be at most 200 characters' }).optional(),
  job: JobParamsSchema.shape.jobId.optional(),
  max: wholeText('max', 1, 1_000).default(200),
});

/** Characters of one log line the page gets (a line can be a megabyte of JSON). */
const LOG_LINE_CHARS = 4_000;
/** stderr lines shown with a crash or an exit (the launch command's last words: an ImportError, a missing library). */
const CRASH_STDERR_LINES = 12;

const ScaleEventsQuerySchema = z.object({
  endpoint: EndpointParamsSchema.shape.endpointId.optional(),
  max: wholeText('max', 1, 5_000).default(500),
});

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

function clipLine(line: string): string {
  return line.length > LOG_LINE_CHARS ? `${line.slice(0, LOG_LINE_CHARS)}…` : line;
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

export function registerDashboardRoutes(app: FastifyInstance, context: DashboardRouteContext): void {
  const { harness, hub, files } = context;
  const inputExamples = schemaExamples(context.endpointInputs ?? {});

  registerRoute(app, DASHBOARD_ROUTES.page, async (_request, reply) => sendFile(reply, await files.page('index.html'), 'index.html'));
  registerRoute(app, DASHBOARD_ROUTES.static, async (request, reply) => {
    const { file } = parseRequestPart(FileParamsSchema, request.params, 'path');
    return sendFile(reply, await files.page(file), file);
  });
  registerRoute(app, DASHBOARD_ROUTES.vendor, async (request, reply) => {
    const { file } = parseRequestPart(FileParamsSchema, request.params, 'path');
    return sendFile(reply, await files.vendor(file), file);
  });

  registerRoute(app, DASHBOARD_ROUTES.overview, async (): Promise<OverviewView> => ({
    ...(await hub.snapshot()),
    series: hub.series.points(),
    sampleIntervalMs: context.settings.sampleIntervalMs,
    historyMinutes: context.settings.historyMinutes,
    testInput: context.settings.testInput ?? { input: {} },
    /** Where the form's example comes from: the worker's test input, else each endpoint's input schema. */
    testInputGiven: context.settings.testInput !== undefined,
    inputExamples,
    authenticated: context.authenticated,
    autoCreateEndpoints: harness.autoCreateEndpoints,
    /** Endpoints made on first use, with when (a misspelt id in a client shows here). */
    createdOnUse: [...harness.createdOnUse].map(([id, at]) => ({ id, at })),
    version: context.version,
  }));

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

  registerRoute(app, DASHBOARD_ROUTES.job, async (request) => {
    const { endpointId, jobId } = parseRequestPart(JobParamsSchema, request.params, 'path');
    const endpoint = harness.findEndpoint(endpointId);
    const job = await endpoint?.find(jobId);
    const pending = await endpoint?.peekStream(jobId);
    if (!job) {
      throw new ServerlessWorkerError('SW_JOB_NOT_FOUND', `Job ${jobId} not found on endpoint ${endpointId}`, { jobId, endpointId });
    }
    const runner = await jobRunner(job, { harness, local: context.settings.localWorkers, launched: context.launchedWorkers });
    return jobDetail(job, pending ?? [], context.webhookLog.forJob(jobId), context.gpuJobLog.forJob(endpointId, jobId, runner));
  });

  // A value whole, on demand: its JSON text is sent as it is, never wrapped in a live message.
  registerRoute(app, DASHBOARD_ROUTES.jobValue, async (request, reply) => {
    const { endpointId, jobId, part } = parseRequestPart(ValueParamsSchema, request.params, 'path');
    const { download } = parseRequestPart(ValueQuerySchema, request.query, 'query string');
    const endpoint = harness.findEndpoint(endpointId);
    const job = await endpoint?.find(jobId);
    if (!endpoint || !job) {
      throw new ServerlessWorkerError('SW_JOB_NOT_FOUND', `Job ${jobId} not found on endpoint ${endpointId}`, { jobId, endpointId });
    }
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

  registerRoute(app, DASHBOARD_ROUTES.jobAttempts, async (request) => {
    const { endpointId, jobId } = parseRequestPart(JobParamsSchema, request.params, 'path');
    // awaited: the job store's reads become asynchronous (issue 16).
    const job = await harness.findEndpoint(endpointId)?.find(jobId);
    if (!job) {
      throw new ServerlessWorkerError('SW_JOB_NOT_FOUND', `Job ${jobId} not found on endpoint ${endpointId}`, { jobId, endpointId });
    }
    const scaleEvents = context.launchedWorkers?.scaleEvents?.(endpointId) ?? [];
    return jobAttemptsView(
      job,
      context.attemptLog.forJob(endpointId, jobId),
      scaleEvents,
      harness.clock.now(),
      context.attemptLog.limits,
      context.attemptLog.evictedJobs,
    );
  });

  registerRoute(app, DASHBOARD_ROUTES.scaleEvents, async (request): Promise<ScaleEventsView> => {
    const query = parseRequestPart(ScaleEventsQuerySchema, request.query, 'query string');
    const launched = context.launchedWorkers;
    if (!launched?.scaleEvents) return { launcher: false, seq: 0, events: [] };
    const events = launched.scaleEvents(query.endpoint, query.max).map((event): ScaleEventView => {
      if ((event.kind !== 'crash' && event.kind !== 'exit') || event.workerId === undefined) return event;
      const stderr = launched
        .logs(event.endpointId, 1_000, event.workerId)
        // A worker id names one process: its stderr lines are its own, read before or just after it ended.
        .filter((line) => line.stream === 'stderr')
        .slice(-CRASH_STDERR_LINES)
        .map((line) => clipLine(line.line));
      return stderr.length > 0 ? { ...event, stderr } : event;
    });
    return { launcher: true, seq: launched.scaleEventCount ?? 0, events };
  });

  registerRoute(app, DASHBOARD_ROUTES.logs, async (request): Promise<LogsView> => {
    const query = parseRequestPart(LogsQuerySchema, request.query, 'query string');
    const launched = context.launchedWorkers;
    const jobLogs = context.settings.jobLogs;
    let lines: LogLineView[] = launched ? launched.logs(query.endpoint, 1_000, query.worker) : [];
    let dropped: string | undefined;
    let droppedLines = 0;
    if (query.job !== undefined) {
      const jobId = query.job;
      // A job's lines: those of launched workers that name it (ctx.log binds requestId; the runtime's job lines carry it),
      // and those an in-process worker logged for it (job-log-tap.ts).
      lines = lines.filter((line) => line.line.includes(jobId));
      // The job's own lines, kept by bytes and time past the endpoint's ring (launcher/job-lines.ts): the same entries, merged once.
      const kept = launched?.jobLogs?.(query.endpoint, jobId);
      if (kept !== undefined) {
        const seen = new Set(lines);
        const keptCount = kept.lines.length;
        lines = [...kept.lines.filter((line) => !seen.has(line)), ...lines];
        dropped = kept.dropped;
        if (kept.droppedLines !== undefined) {
          // Lines the job's own store dropped may still be in the endpoint's ring, shown above: only those in neither are missing.
          const missing = keptCount + kept.droppedLines.count - lines.length;
          dropped = missing > 0 ? droppedLinesText(missing, kept.droppedLines.because) : undefined;
          droppedLines += Math.max(0, missing);
        } else if (kept.goneLines !== undefined) droppedLines += Math.max(0, kept.goneLines - lines.length);
      }
      const own = jobLogs?.forJob(jobId) ?? [];
      // What the in-process buffer dropped of this job: counted and said, as the launcher's (job-log-tap.ts).
      const ownDropped = jobLogs?.droppedFor(jobId);
      if (ownDropped !== undefined) {
        dropped = dropped === undefined ? ownDropped.why : `${dropped}; ${ownDropped.why}`;
        droppedLines += ownDropped.lines;
      }
      if (own.length > 0)
        lines = [...lines, ...own.map((line) => ({ at: line.at, seq: line.seq, workerId: 'in-process', stream: line.level, line: line.line }))];
    }
    // By time, then by capture order (launcher/log-order.ts): lines of one millisecond as they were read, whichever store kept them.
    lines = [...lines].sort(byTimeThenSeq);
    return {
      launcher: launched !== undefined,
      inProcess: jobLogs !== undefined,
      lines: lines.slice(-query.max).map((line) => ({ at: line.at, seq: line.seq, workerId: line.workerId, stream: line.stream, line: clipLine(line.line) })),
      ...(dropped !== undefined ? { dropped, droppedLines } : {}),
    };
  });

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
