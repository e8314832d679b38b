/**
 * @module harness/store/postgres/row-schemas
 * The zod schemas of the rows the store reads: a job row (rows.ts parses and turns it
 * into a StoredJob) and a claimed one (queue.ts's take). A file of their own because
 * both the parses and their plain fast paths (plain-rows.ts) need them: in rows.ts and
 * queue.ts, which call the fast paths, they made the three files a cycle.
 */
import * as z from 'zod';
import { JOB_STATUSES, type JobErrorPayload, type JobRequest, requestFromText } from 'serverless-worker/internal';

/** A bigint or integer column: text or number from the driver, a safe integer here. */
export const int = z.union([z.string(), z.number()]).transform((value, context) => {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) {
    context.addIssue({ code: 'custom', message: `expected a safe integer, got ${String(value)}` });
    return z.NEVER;
  }
  return number;
});
export const optionalInt = int.nullable().transform((value) => value ?? undefined);
const optionalText = z
  .string()
  .nullable()
  .transform((value) => value ?? undefined);

/**
 * The request, read as its text (`request::text`, REQUEST_COLUMN) and turned into an
 * object here with a large input left as its text (RawJson): a /status of a job whose
 * input is 10 MB must not parse it on the event loop. Validated when the job was
 * submitted; checked here for its outline only.
 */
export const requestJson = z
  .string()
  .transform((text) => requestFromText(text))
  .pipe(z.custom<JobRequest>((value) => typeof value === 'object' && value !== null && 'input' in value, 'a job request object with input'));
/** The request column as text, for requestJson. */
export const REQUEST_COLUMN = 'request::text AS request';
const errorJson = z.custom<JobErrorPayload>((value) => typeof value === 'object' && value !== null && 'error_message' in value, 'a job error payload');
const resultFromJson = z.object({ workerId: z.string().nullable().optional(), attempt: z.number() });

export const JobRow = z.object({
  endpoint_id: z.string(),
  id: z.string(),
  request: requestJson,
  sync: z.boolean(),
  status: z.enum(JOB_STATUSES),
  submitted_at: int,
  queued_at: int,
  started_at: optionalInt,
  ended_at: optionalInt,
  worker_id: optionalText,
  output: z.unknown(),
  /** output IS NOT NULL: a job's output may be JSON null, which the driver reads as null too. */
  has_output: z.boolean(),
  error: errorJson.nullable(),
  retries: int,
  attempt: int,
  lost: int,
  result_from: resultFromJson.nullable(),
  cancelled_from: optionalText,
  chunk_count: int,
  unread_count: int,
  expires_at: int,
  execution_deadline: optionalInt,
  execution_timeout_ms: optionalInt,
  retention_ms: int,
  delete_at: optionalInt,
  reported_at: optionalInt,
});
export type JobRow = z.infer<typeof JobRow>;

/**
 * A claimed job as the take statement answers it (parsed at the boundary): the whole job row
 * after the claim (the store keeps the job as taken, and its result builds the ended job from it:
 * completion.ts), its place in the queue, and its row's place.
 */
export const ClaimedRow = JobRow.extend({
  /** Set by the claim: the attempt's facts, kept by the store for the result (completion.ts). */
  started_at: int,
  execution_timeout_ms: int,
  queue_seq: int,
  /** The row's place after the take (its new version's ctid, as text): the result finds the row by it (result-writes.ts). */
  ctid: z.string(),
});
export type ClaimedRow = z.infer<typeof ClaimedRow>;
