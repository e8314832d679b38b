/**
 * @module harness/store/postgres/plain-rows
 * The fast paths of the job rows' parses on the hot path, a job row (`parseJobRow`,
 * rows.ts: a result's write answers its row) and a claimed one (`parseClaimedRow`,
 * queue.ts), for a row in the shape the driver gives: text, numbers (bigint columns as
 * text), booleans, nulls, parsed jsonb. Each checks what its zod schema checks, field by
 * field with typeof, and builds the same record; a row with anything else in any field is
 * answered undefined and goes to the zod schema, which stays the one judge of what a row
 * may hold and of the error a bad one gets. Why a second path: the zod parse of each
 * row allocated more than anything else in the in-process drain and made the functions V8
 * compiles around it large; with this path the drain ran 15-20 % faster on this machine
 * (bench/README, 2026-11-28). `plain-rows.unit.test.ts` holds each pair to one answer.
 */
import { JOB_STATUSES, type JobErrorPayload, type JobRequest, type JobStatus, requestFromText } from 'serverless-worker/internal';
import type { ClaimedRow, JobRow } from './row-schemas.js';

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

function resultFrom(value: unknown): Checked<JobRow['result_from']> {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return NOT_PLAIN;
  const { workerId, attempt } = value as { workerId?: unknown; attempt?: unknown };
  if (typeof attempt !== 'number' || !Number.isFinite(attempt)) return NOT_PLAIN;
  if (workerId === undefined) return { attempt };
  return workerId === null || typeof workerId === 'string' ? { workerId, attempt } : NOT_PLAIN;
}

/** Whether every field checked is in the plain shape. */
function allPlain(fields: Readonly<Record<string, unknown>>): boolean {
  return !Object.values(fields).includes(NOT_PLAIN);
}

/** The request column's text as requestJson reads it (a large input left as its text), or undefined when it is no request. */
function plainRequest(text: string): JobRequest | undefined {
  const request: unknown = requestFromText(text);
  return typeof request === 'object' && request !== null && 'input' in request ? (request as JobRequest) : undefined;
}

/** The row as JobRow.parse answers it, or undefined when some field is not in the plain shape (zod decides then). */
export function plainJobRow(raw: unknown): JobRow | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const row = raw as Record<string, unknown>;
  const { endpoint_id: endpointId, id, request, sync, status, error, has_output: hasOutput } = row;
  if (typeof endpointId !== 'string' || typeof id !== 'string' || typeof request !== 'string' || typeof sync !== 'boolean') return undefined;
  if (typeof status !== 'string' || !STATUSES.has(status) || typeof hasOutput !== 'boolean') return undefined;
  if (error !== null && (typeof error !== 'object' || !('error_message' in error))) return undefined;
  const fields = {
    submitted_at: int(row.submitted_at),
    queued_at: int(row.queued_at),
    started_at: optionalInt(row.started_at),
    ended_at: optionalInt(row.ended_at),
    worker_id: optionalText(row.worker_id),
    retries: int(row.retries),
    attempt: int(row.attempt),
    lost: int(row.lost),
    result_from: resultFrom(row.result_from),
    cancelled_from: optionalText(row.cancelled_from),
    chunk_count: int(row.chunk_count),
    unread_count: int(row.unread_count),
    expires_at: int(row.expires_at),
    execution_deadline: optionalInt(row.execution_deadline),
    execution_timeout_ms: optionalInt(row.execution_timeout_ms),
    retention_ms: int(row.retention_ms),
    delete_at: optionalInt(row.delete_at),
    reported_at: optionalInt(row.reported_at),
  };
  const parsedRequest = allPlain(fields) ? plainRequest(request) : undefined;
  if (!parsedRequest) return undefined;
  return {
    endpoint_id: endpointId,
    id,
    request: parsedRequest,
    sync,
    status: status as JobStatus,
    output: row.output,
    has_output: hasOutput,
    error: error as JobErrorPayload | null,
    ...(fields as unknown as Pick<JobRow, keyof typeof fields>),
  };
}

/** The claim's row as ClaimedRow.parse answers it, or undefined when some field is not in the plain shape (zod decides then). */
export function plainClaimedRow(raw: unknown): ClaimedRow | undefined {
  const job = plainJobRow(raw);
  if (!job) return undefined;
  const { queue_seq: queueSeq, ctid } = raw as Record<string, unknown>;
  const seq = int(queueSeq);
  const { started_at: startedAt, execution_timeout_ms: timeoutMs } = job;
  if (seq === NOT_PLAIN || typeof ctid !== 'string' || startedAt === undefined || timeoutMs === undefined) return undefined;
  return { ...job, started_at: startedAt, execution_timeout_ms: timeoutMs, queue_seq: seq, ctid };
}
