/**
 * @module harness/dashboard/route-queries
 * What the dashboard's routes (routes.ts) accept: their path parameters, query strings
 * and the bulk body, as zod schemas whose messages name the bad field and what it takes,
 * and the store's list query a jobs query string makes.
 */
import * as z from 'zod';
import { JOB_STATUSES } from 'serverless-worker/internal';
import { EndpointParamsSchema, JobParamsSchema } from '../queue-api/params.js';
import { BULK_MAX_JOBS } from './all-jobs.js';
import type { JobsQuery } from './views.js';

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

export const JobsQuerySchema = z.object({
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

export const AllJobsQuerySchema = JobsQuerySchema.extend({ endpoint: EndpointListSchema });

export const BulkBodySchema = z.object({
  action: z.enum(['cancel', 'retry'], { error: 'action must be cancel or retry' }),
  jobs: z
    .array(z.object({ endpointId: EndpointParamsSchema.shape.endpointId, id: JobParamsSchema.shape.jobId }), {
      error: 'jobs must be a list of { endpointId, id }',
    })
    .max(BULK_MAX_JOBS, { error: `jobs must list at most ${BULK_MAX_JOBS} jobs` }),
});

/** The store's list query for the jobs routes' query string. */
export function listQueryOf(query: z.infer<typeof JobsQuerySchema>): JobsQuery {
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

export const ValueParamsSchema = JobParamsSchema.extend({
  part: z.enum(['input', 'output', 'error', 'chunks'], { error: 'part must be one of input, output, error, chunks' }),
});

export const ValueQuerySchema = z.object({
  download: z.enum(['0', '1'], { error: 'download must be 0 or 1' }).default('0'),
});

export const FileParamsSchema = z.object({ file: z.string().min(1).max(100, { error: 'file name must be at most 100 characters' }) });

export const EventsQuerySchema = z.object({
  endpoint: EndpointParamsSchema.shape.endpointId.optional(),
  job: JobParamsSchema.shape.jobId.optional(),
});

export const LogsQuerySchema = z.object({
  endpoint: EndpointParamsSchema.shape.endpointId,
  worker: z.string().min(1).max(200, { error: 'worker must be at most 200 characters' }).optional(),
  job: JobParamsSchema.shape.jobId.optional(),
  max: wholeText('max', 1, 1_000).default(200),
});

export const ScaleEventsQuerySchema = z.object({
  endpoint: EndpointParamsSchema.shape.endpointId.optional(),
  max: wholeText('max', 1, 5_000).default(500),
});
