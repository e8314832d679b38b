/**
 * @module harness/store/postgres/ended-jobs
 * The ended jobs a result statement answers (result-writes.ts), one a write: read from the
 * rows it sent back, or, where every write carries its job as the claim left it, built from
 * that job and the change (the statement then sends back only the written rows' keys).
 */
import type postgres from 'postgres';
import type { JobChange, JobErrorPayload, StoredJob } from 'serverless-worker/internal';
import { storedJobOf } from './rows.js';

/** What these need of a result's write (result-writes.ts's ResultWrite). */
export interface WrittenResult {
  readonly change: JobChange;
  /** The JSON text of the error the change sets (null: cleared). */
  readonly json: { readonly error: string | null };
  /** The job as the claim left the row version the write matched, when this process kept it. */
  readonly claimed: StoredJob | undefined;
}

/** A job's key: its endpoint and id (result-writes.ts keys its writes by it). */
export function jobKey(job: { readonly endpointId: string; readonly id: string }): string {
  return `${job.endpointId}\u0000${job.id}`;
}

/** Each write's ended job as the statement answered it (undefined: changed since, or a job named twice). */
export function endedJobs(
  rows: postgres.RowList<postgres.Row[]>,
  writes: readonly WrittenResult[],
  keys: readonly string[],
  first: readonly boolean[],
): (StoredJob | undefined)[] {
  const ended = new Map<string, StoredJob>();
  for (const row of rows) {
    const job = storedJobOf(row);
    ended.set(jobKey(job), job);
  }
  return writes.map((write, index) => {
    const job = first[index] ? ended.get(keys[index] as string) : undefined;
    // The output as posted: a JSON null one is NULL in the row. A cleared one (a FAILED job's progress) stays absent.
    return job && write.change.fields.output !== undefined ? { ...job, output: write.change.fields.output } : job;
  });
}

/** Each write's ended job, built from the job as claimed (undefined: changed since, or a job named twice). */
export function endedFromClaims(
  rows: postgres.RowList<postgres.Row[]>,
  writes: readonly WrittenResult[],
  keys: readonly string[],
  first: readonly boolean[],
): (StoredJob | undefined)[] {
  const written = new Set<string>();
  for (const row of rows) written.add(jobKey({ endpointId: String(row.endpoint_id), id: String(row.id) }));
  return writes.map((write, index) => (first[index] && write.claimed && written.has(keys[index] as string) ? endedFromClaim(write.claimed, write) : undefined));
}

/**
 * The ended job as endedJobs answers it for the row the write left (toStoredJob of the row read
 * back, the output as posted), from the row's version before it (the claim's: a write by place
 * matches only that version) and the change: each field the change names as the row now holds it
 * (cleared when undefined; a JSON field as its JSON text reads back), the others as claimed. Built
 * as plainStoredJob builds a job (its keys in that order, each named where it is set, and no closure:
 * a loop over the keys made each store a keyed one, the drain's costliest line after the driver's).
 */
function endedFromClaim(claimed: StoredJob, write: WrittenResult): StoredJob {
  const fields: JobChange['fields'] = write.change.fields;
  const job: { -readonly [K in keyof StoredJob]: StoredJob[K] } = {
    id: claimed.id,
    endpointId: claimed.endpointId,
    request: claimed.request,
    sync: claimed.sync,
    status: fields.status,
    submittedAt: claimed.submittedAt,
    queuedAt: 'queuedAt' in fields && fields.queuedAt !== undefined ? fields.queuedAt : claimed.queuedAt,
  } as StoredJob;
  const startedAt = 'startedAt' in fields ? fields.startedAt : claimed.startedAt;
  if (startedAt !== undefined) job.startedAt = startedAt;
  const endedAt = 'endedAt' in fields ? fields.endedAt : claimed.endedAt;
  if (endedAt !== undefined) job.endedAt = endedAt;
  const workerId = 'workerId' in fields ? fields.workerId : claimed.workerId;
  if (workerId !== undefined) job.workerId = workerId;
  // The output as posted (a JSON null one too: endedJobs), the error and resultFrom as their JSON reads back.
  const output = 'output' in fields ? fields.output : claimed.output;
  if (output !== undefined) job.output = output;
  const error = 'error' in fields ? (write.json.error === null ? undefined : (JSON.parse(write.json.error) as JobErrorPayload)) : claimed.error;
  if (error !== undefined) job.error = error;
  job.retries = 'retries' in fields && fields.retries !== undefined ? fields.retries : claimed.retries;
  job.attempt = 'attempt' in fields && fields.attempt !== undefined ? fields.attempt : claimed.attempt;
  job.lost = 'lost' in fields && fields.lost !== undefined ? fields.lost : claimed.lost;
  const from = 'resultFrom' in fields ? fields.resultFrom : claimed.resultFrom;
  if (from) job.resultFrom = { workerId: from.workerId ?? undefined, attempt: from.attempt };
  const cancelledFrom = 'cancelledFrom' in fields ? fields.cancelledFrom : claimed.cancelledFrom;
  if (cancelledFrom !== undefined) job.cancelledFrom = cancelledFrom;
  job.chunkCount = 'chunkCount' in fields && fields.chunkCount !== undefined ? fields.chunkCount : claimed.chunkCount;
  job.unreadChunkCount = claimed.unreadChunkCount;
  job.expiresAt = claimed.expiresAt;
  const deadline = 'executionDeadline' in fields ? fields.executionDeadline : claimed.executionDeadline;
  if (deadline !== undefined) job.executionDeadline = deadline;
  const timeoutMs = 'executionTimeoutMs' in fields ? fields.executionTimeoutMs : claimed.executionTimeoutMs;
  if (timeoutMs !== undefined) job.executionTimeoutMs = timeoutMs;
  job.retentionMs = claimed.retentionMs;
  const deleteAt = 'deleteAt' in fields ? fields.deleteAt : claimed.deleteAt;
  if (deleteAt !== undefined) job.deleteAt = deleteAt;
  const reportedAt = 'reportedAt' in fields ? fields.reportedAt : claimed.reportedAt;
  if (reportedAt !== undefined) job.reportedAt = reportedAt;
  return job;
}
