/**
 * @module harness/queue-api/params
 * zod schemas for the queue API's path parameters and query strings. Query values
 * arrive as text; each is checked as text and then as a number, so a bad value is
 * answered 400 SW_INVALID_REQUEST naming the parameter, the allowed range and what
 * arrived.
 */
import * as z from 'zod';
import { JOB_STATUSES, type JobStatus, parseOrThrow, RUNSYNC_WAIT_MS, TTL_MS } from 'serverless-worker/internal';

/** A whole number of milliseconds from `min` to `max`, given as query text. */
export function msQuery(name: string, range: { min: number; max: number }) {
  const message = `${name} must be a whole number of milliseconds from ${range.min} to ${range.max}`;
  return z
    .string({ error: message })
    .regex(/^\d{1,16}$/, { error: message })
    .transform(Number)
    .pipe(z.number().int().min(range.min, { error: message }).max(range.max, { error: message }));
}

/** Endpoint ids: letters, digits, `-`, `_`, `.`; 1 to 128 characters. */
export const EndpointParamsSchema = z.object({
  endpointId: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, { error: 'endpoint id must be 1-128 letters, digits, ".", "-" or "_"' }),
});

export const JobParamsSchema = EndpointParamsSchema.extend({
  jobId: z.string().min(1).max(200, { error: 'job id must be at most 200 characters' }),
});

/** /runsync and /status-sync: `wait`, 1000..300000 ms, default 90000 (spec 4.2). */
export const WaitQuerySchema = z.object({
  wait: msQuery('wait', RUNSYNC_WAIT_MS).default(RUNSYNC_WAIT_MS.default),
});

/** /status: `ttl` sets the job's time to live from now; same range as policy.ttl. */
export const StatusQuerySchema = z.object({
  ttl: msQuery('ttl', TTL_MS).optional(),
});

/** How long /stream waits for a chunk or a status change when it has none to give. */
export const STREAM_WAIT_MS = { min: 0, max: RUNSYNC_WAIT_MS.max } as const;

export function streamQuerySchema(defaultWaitMs: number) {
  return z.object({ wait: msQuery('wait', STREAM_WAIT_MS).default(defaultWaitMs) });
}

/** /requests: how many to list, 1..1000, default 100. */
export const REQUESTS_LIMIT = { min: 1, max: 1000, default: 100 } as const;

const statusList = z
  .string()
  .transform((text) =>
    text
      .split(',')
      .map((s) => s.trim().toUpperCase())
      .filter((s) => s.length > 0),
  )
  .pipe(
    z.array(z.enum(JOB_STATUSES, { error: `status must be a comma-separated list of ${JOB_STATUSES.join(', ')}` })).min(1, {
      error: `status must name at least one of ${JOB_STATUSES.join(', ')}`,
    }),
  );

export const RequestsQuerySchema = z.object({
  /** Only jobs in these states (comma-separated, or the parameter repeated); default all. */
  status: z
    .union([z.string(), z.array(z.string())])
    .transform((value) => (Array.isArray(value) ? value.join(',') : value))
    .pipe(statusList)
    .optional(),
  limit: z
    .string({ error: `limit must be a whole number from ${REQUESTS_LIMIT.min} to ${REQUESTS_LIMIT.max}` })
    .regex(/^\d{1,6}$/, { error: `limit must be a whole number from ${REQUESTS_LIMIT.min} to ${REQUESTS_LIMIT.max}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(REQUESTS_LIMIT.min, { error: `limit must be a whole number from ${REQUESTS_LIMIT.min} to ${REQUESTS_LIMIT.max}` })
        .max(REQUESTS_LIMIT.max, { error: `limit must be a whole number from ${REQUESTS_LIMIT.min} to ${REQUESTS_LIMIT.max}` }),
    )
    .default(REQUESTS_LIMIT.default),
});
export type RequestsQuery = { status?: JobStatus[]; limit: number };

/** Parse a path's parameters or a query string; 400 SW_INVALID_REQUEST naming the bad one. */
export function parseRequestPart<S extends z.ZodType>(schema: S, value: unknown, what: 'path' | 'query string'): z.infer<S> {
  return parseOrThrow(schema, value ?? {}, 'SW_INVALID_REQUEST', what);
}
