/**
 * @module harness/store/postgres/plain-rows
 * The fast paths of the job rows' parses on the hot path, a job row (`storedJobOf`, rows.ts:
 * reads, a result's write read back) and a claimed one (`parseClaimedRow`, queue.ts: each
 * job a take hands out, kept whole for its result), for a row in the shape the driver gives:
 * text, numbers (bigint columns as text), booleans, nulls, parsed jsonb. Each checks what its
 * zod schema checks, field by field with typeof, and builds the record the zod path builds
 * (toStoredJob of the parsed row) directly, with no row record between; a row with anything
 * else in any field is answered undefined and goes to the zod schema, which stays the one
 * judge of what a row may hold and of the error a bad one gets. Why a second path: the zod
 * parse of each row allocated more than anything else in the in-process drain and made the
 * functions V8 compiles around it large; with this path the drain ran 15-20 % faster on this
 * machine (bench/README, 2026-11-28). `plain-rows.unit.test.ts` holds each pair to one answer.
 */
import { JOB_STATUSES, type JobErrorPayload, type JobRequest, requestFromText, type StoredJob } from 'serverless-worker/internal';

/** A field that is not in the plain shape: the row goes to zod. */
const NOT_PLAIN = Symbol('not plain');
type Checked<T> = T | typeof NOT_PLAIN;

const STATUSES: ReadonlySet<string> = new Set(JOB_STATUSES);

/** A bigint (text) or integer (number) column: a safe integer, as JobRow's `int` reads it. */
function int(value: unknown): Checked<number> {
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isSafeInteger(number) ? number : NOT_PLAIN;
}

function optionalInt(value: unknown): Checked<number | undefined> {
  return value === null ? undefined : int(value);
}

function optionalText(value: unknown): Checked<string | undefined> {
  return value === null ? undefined : typeof value === 'string' ? value : NOT_PLAIN;
}

/** The result_from column as JobRow reads it. */
function resultFrom(value: unknown): Checked<{ readonly workerId?: string | null; readonly attempt: number } | null> {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return NOT_PLAIN;
  const { workerId, attempt } = value as { workerId?: unknown; attempt?: unknown };
  if (typeof attempt !== 'number' || !Number.isFinite(attempt)) return NOT_PLAIN;
  if (workerId === undefined) return { attempt };
  return workerId === null || typeof workerId === 'string' ? { workerId, attempt } : NOT_PLAIN;
}

/** The request column's text as requestJson reads it (a large input left as its text), or undefined when it is no request. */
function plainRequest(text: string): JobRequest | undefined {
  const request: unknown = requestFromText(text);
  return typeof request === 'object' && request !== null && 'input' in request ? (request as JobRequest) : undefined;
}

/**
 * The record toStoredJob answers for JobRow.parse's row (rows.ts), or undefined when some field
 * is not in the plain shape (zod decides then). Its keys in toStoredJob's order, absent ones left out.
 */
export function plainStoredJob(raw: unknown): StoredJob | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const row = raw as Record<string, unknown>;
  const { endpoint_id: endpointId, id, request, sync, status, error, has_output: hasOutput } = row;
  if (typeof endpointId !== 'string' || typeof id !== 'string' || typeof request !== 'string' || typeof sync !== 'boolean') return undefined;
  if (typeof status !== 'string' || !STATUSES.has(status) || typeof hasOutput !== 'boolean') return undefined;
  if (error !== null && (typeof error !== 'object' || !('error_message' in error))) return undefined;
  const submittedAt = int(row.submitted_at);
  const queuedAt = int(row.queued_at);
  const startedAt = optionalInt(row.started_at);
  const endedAt = optionalInt(row.ended_at);
  const workerId = optionalText(row.worker_id);
  const retries = int(row.retries);
  const attempt = int(row.attempt);
  const lost = int(row.lost);
  const from = resultFrom(row.result_from);
  const cancelledFrom = optionalText(row.cancelled_from);
  const chunkCount = int(row.chunk_count);
  const unreadChunkCount = int(row.unread_count);
  const expiresAt = int(row.expires_at);
  const executionDeadline = optionalInt(row.execution_deadline);
  const executionTimeoutMs = optionalInt(row.execution_timeout_ms);
  const retentionMs = int(row.retention_ms);
  const deleteAt = optionalInt(row.delete_at);
  const reportedAt = optionalInt(row.reported_at);
  if (
    submittedAt === NOT_PLAIN ||
    queuedAt === NOT_PLAIN ||
    startedAt === NOT_PLAIN ||
    endedAt === NOT_PLAIN ||
    workerId === NOT_PLAIN ||
    retries === NOT_PLAIN ||
    attempt === NOT_PLAIN ||
    lost === NOT_PLAIN ||
    from === NOT_PLAIN ||
    cancelledFrom === NOT_PLAIN ||
    chunkCount === NOT_PLAIN ||
    unreadChunkCount === NOT_PLAIN ||
    expiresAt === NOT_PLAIN ||
    executionDeadline === NOT_PLAIN ||
    executionTimeoutMs === NOT_PLAIN ||
    retentionMs === NOT_PLAIN ||
    deleteAt === NOT_PLAIN ||
    reportedAt === NOT_PLAIN
  )
    return undefined;
  const parsedRequest = plainRequest(request);
  if (!parsedRequest) return undefined;
  const job: Record<string, unknown> = { id, endpointId, request: parsedRequest, sync, status, submittedAt, queuedAt };
  if (startedAt !== undefined) job.startedAt = startedAt;
  if (endedAt !== undefined) job.endedAt = endedAt;
  if (workerId !== undefined) job.workerId = workerId;
  if (hasOutput && row.output !== undefined) job.output = row.output;
  if (error !== null) job.error = error as JobErrorPayload;
  job.retries = retries;
  job.attempt = attempt;
  job.lost = lost;
  if (from) job.resultFrom = { workerId: from.workerId ?? undefined, attempt: from.attempt };
  if (cancelledFrom !== undefined) job.cancelledFrom = cancelledFrom;
  job.chunkCount = chunkCount;
  job.unreadChunkCount = unreadChunkCount;
  job.expiresAt = expiresAt;
  if (executionDeadline !== undefined) job.executionDeadline = executionDeadline;
  if (executionTimeoutMs !== undefined) job.executionTimeoutMs = executionTimeoutMs;
  job.retentionMs = retentionMs;
  if (deleteAt !== undefined) job.deleteAt = deleteAt;
  if (reportedAt !== undefined) job.reportedAt = reportedAt;
  return job as unknown as StoredJob;
}

/** A claimed job: the job as the claim left its row, its place in the queue, its row's place, and its execution deadline. */
export interface ClaimedJob {
  readonly job: StoredJob;
  readonly queueSeq: number;
  /** The row's place after the take (its new version's ctid, as text): the result finds the row by it (result-writes.ts). */
  readonly ctid: string;
  /** startedAt + executionTimeoutMs (both set by the claim). */
  readonly due: number;
}

/** The claim's row as ClaimedRow.parse and claimedOf (queue.ts) answer it, or undefined when some field is not in the plain shape. */
export function plainClaimedJob(raw: unknown): ClaimedJob | undefined {
  const job = plainStoredJob(raw);
  if (!job) return undefined;
  const { queue_seq: queueSeq, ctid } = raw as Record<string, unknown>;
  const seq = int(queueSeq);
  const { startedAt, executionTimeoutMs } = job;
  if (seq === NOT_PLAIN || typeof ctid !== 'string' || startedAt === undefined || executionTimeoutMs === undefined) return undefined;
  return { job, queueSeq: seq, ctid, due: startedAt + executionTimeoutMs };
}
