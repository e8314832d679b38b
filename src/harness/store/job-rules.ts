/**
 * @module harness/store/job-rules
 * The rules that make and change a job, once, as pure functions: a new submission's
 * record (`queuedJob`); from the job as it is and the
 * event (a result, a cancel, a retry, a lost worker, a job given back, a deadline) to the
 * change, described as data: the fields it writes (a value, or undefined for a field it
 * clears), what it counts, the worker it releases, the stop order it sends, and whether
 * the job's chunks go. Or the refusal, with its reason. Both stores apply these (the
 * memory store to its record, PostgreSQL to the row), so their rules cannot drift;
 * `changeEvents` names the events a change emits, in the order both stores send them.
 */
import {
  RETENTION_MS,
  ServerlessWorkerError,
  isTerminal,
  nextState,
  resolvePolicy,
  type JobErrorPayload,
  type JobRequest,
  type JobResult,
  type JobStatus,
  type JobTrigger,
  type StopReason,
} from '../../job/index.js';
import { requeueLimitPayload } from './attempts.js';
import { syncRetentionMs } from './retention.js';
import { executionTimeoutError } from './post-rules.js';
import type { StopOrder, StoreEvent, StoredJob } from './job-store.js';

/** A submission as the store takes it. */
export interface Submission {
  readonly id: string;
  readonly endpointId: string;
  readonly request: JobRequest;
  readonly sync: boolean;
  /** A sync job's wait (its retention follows it), ms. */
  readonly waitMs: number | undefined;
}

/** The record of a new job, IN_QUEUE from `now`: its ttl from the request's policy, its retention from how it was submitted. */
export function queuedJob(submission: Submission, now: number): StoredJob {
  const { id, endpointId, request, sync, waitMs } = submission;
  return {
    id,
    endpointId,
    request,
    sync,
    status: 'IN_QUEUE',
    submittedAt: now,
    queuedAt: now,
    retries: 0,
    attempt: 0,
    lost: 0,
    chunkCount: 0,
    unreadChunkCount: 0,
    expiresAt: now + resolvePolicy(request.policy).ttl,
    retentionMs: sync ? syncRetentionMs(waitMs) : RETENTION_MS.async,
  };
}

/** The fields of a job the rules read. */
export type JobFacts = Pick<
  StoredJob,
  'id' | 'endpointId' | 'status' | 'workerId' | 'startedAt' | 'attempt' | 'lost' | 'retries' | 'retentionMs' | 'executionTimeoutMs'
>;

/** Fields a change may write. */
export type ChangedField =
  | 'queuedAt'
  | 'startedAt'
  | 'endedAt'
  | 'workerId'
  | 'output'
  | 'error'
  | 'retries'
  | 'attempt'
  | 'lost'
  | 'resultFrom'
  | 'cancelledFrom'
  | 'chunkCount'
  | 'executionDeadline'
  | 'executionTimeoutMs'
  | 'deleteAt'
  | 'reportedAt';

/** What a change writes: the new status, and each field it sets (undefined: cleared). A field not named is kept. */
export type JobPatch = { readonly status: JobStatus } & { readonly [K in ChangedField]?: StoredJob[K] | undefined };

export interface JobChange {
  /** ended: a terminal status; requeued: IN_QUEUE at the end of the queue; returned: IN_QUEUE at its old place. */
  readonly kind: 'ended' | 'requeued' | 'returned';
  readonly fields: JobPatch;
  /** The endpoint counter it moves. */
  readonly counted?: 'completed' | 'failed' | 'retried';
  /** The worker that held the job and holds it no more. */
  readonly releasedFrom?: string;
  /** A stop order for that worker. */
  readonly stop?: StopReason;
  /** The job's chunks go (a requeued job streams anew). */
  readonly dropsChunks: boolean;
}

/** A change the job's state does not allow, with the error the caller gets. */
export interface Refused {
  readonly kind: 'refused';
  readonly error: ServerlessWorkerError;
}

/** Nothing to change (a cancel of a cancelled job). */
export interface Unchanged {
  readonly kind: 'unchanged';
}

/** The job reaches a terminal status by `trigger`: released, its deadline cleared, kept for its retention. */
export function endChange(job: JobFacts, trigger: JobTrigger, result: { output?: unknown; error?: JobErrorPayload }, now: number): JobChange {
  return ended(job, trigger, result, now, undefined);
}

/**
 * endChange, with `resultFrom` among its fields when given (a worker's result). The change and its
 * fields are built once, in their final shape: a result is the hot path of every drain.
 */
function ended(
  job: JobFacts,
  trigger: JobTrigger,
  result: { output?: unknown; error?: JobErrorPayload },
  now: number,
  resultFrom: StoredJob['resultFrom'],
): JobChange {
  const status = nextState(job.status, trigger, job.id);
  const fields: { -readonly [K in keyof JobPatch]: JobPatch[K] } = {
    status,
    workerId: undefined,
    executionDeadline: undefined,
    deleteAt: now + job.retentionMs,
  };
  if (job.startedAt !== undefined) fields.endedAt = now;
  let counted: JobChange['counted'];
  if (status === 'COMPLETED') {
    fields.output = result.output;
    counted = 'completed';
  } else {
    // FAILED, TIMED_OUT, CANCELLED: the last ctx.progress value is no result; /status shows the
    // error alone, as the platform does (its worker posts `{"error"}` without `output`).
    fields.output = undefined;
    if (status === 'FAILED' || status === 'TIMED_OUT') {
      if (result.error !== undefined) fields.error = result.error;
      counted = 'failed';
    }
  }
  if (resultFrom !== undefined) fields.resultFrom = resultFrom;
  const change: { -readonly [K in keyof JobChange]: JobChange[K] } = { kind: 'ended', fields, dropsChunks: false };
  if (counted) change.counted = counted;
  if (job.workerId !== undefined) change.releasedFrom = job.workerId;
  return change;
}

/** A worker's result ends the job (the post rules let it through); a repeat of this post is answered `repeated`. */
export function completeChange(job: JobFacts, workerId: string | undefined, result: JobResult, now: number): JobChange {
  const from = { workerId, attempt: job.attempt };
  return result.kind === 'output'
    ? ended(job, 'complete', { output: result.output }, now, from)
    : ended(job, result.timedOut === true ? 'timeout' : 'fail', { error: result.error }, now, from);
}

/**
 * Back at the end of the queue (a retry, or the requeue of a lost job), its attempt's
 * traces cleared; a job lost more than `maxRequeues` times ends FAILED (SW_REQUEUE_LIMIT) instead.
 */
export function requeueChange(job: JobFacts, trigger: 'retry' | 'requeue', maxRequeues: number, now: number): JobChange {
  const lost = trigger === 'retry' ? 0 : job.lost + 1;
  if (lost > maxRequeues) {
    const ended = endChange(job, 'fail', { error: requeueLimitPayload({ id: job.id, lost }, maxRequeues, job.workerId) }, now);
    return { ...ended, fields: { ...ended.fields, lost } };
  }
  const fields: JobPatch = {
    status: nextState(job.status, trigger, job.id),
    lost,
    workerId: undefined,
    output: undefined,
    error: undefined,
    startedAt: undefined,
    endedAt: undefined,
    resultFrom: undefined,
    executionDeadline: undefined,
    deleteAt: undefined,
    reportedAt: undefined,
    chunkCount: 0,
    queuedAt: now,
    retries: job.retries + 1,
  };
  return { kind: 'requeued', fields, counted: 'retried', dropsChunks: true, ...released(job) };
}

/** A job taken but never handed to its worker: IN_QUEUE again at its place, as if never taken (nothing counted). */
export function giveBackChange(job: JobFacts): JobChange {
  const fields: JobPatch = {
    status: nextState(job.status, 'requeue', job.id),
    workerId: undefined,
    startedAt: undefined,
    executionDeadline: undefined,
    executionTimeoutMs: undefined,
    reportedAt: undefined,
    attempt: job.attempt - 1,
  };
  return { kind: 'returned', fields, dropsChunks: false, ...released(job) };
}

/** The execution deadline passed: TIMED_OUT (SW_EXECUTION_TIMEOUT), and its worker is told to stop. */
export function timeoutChange(job: JobFacts, now: number): JobChange {
  const change = endChange(job, 'timeout', { error: executionTimeoutError(job, job.workerId) }, now);
  return withStop(change, 'timeout');
}

/** A caller's cancel: refused once the job ended otherwise; a cancelled job stays as it is. */
export function cancelChange(job: JobFacts, now: number): JobChange | Refused | Unchanged {
  if (job.status === 'CANCELLED') return { kind: 'unchanged' };
  if (isTerminal(job.status)) {
    const error = new ServerlessWorkerError(
      'SW_CANCEL_NOT_ALLOWED',
      `Job ${job.id} has already ended with status ${job.status}; only IN_QUEUE or IN_PROGRESS jobs can be cancelled`,
      { jobId: job.id, status: job.status },
    );
    return { kind: 'refused', error };
  }
  const change = endChange(job, 'cancel', {}, now);
  // A running job keeps the worker it ran on (the holder is cleared as for any end).
  const held =
    job.status === 'IN_PROGRESS' && job.workerId !== undefined && change.kind === 'ended'
      ? { ...change, fields: { ...change.fields, cancelledFrom: job.workerId } }
      : change;
  return withStop(held, 'cancelled');
}

/** A caller's retry: only a FAILED or TIMED_OUT job runs again (its lost count starts over). */
export function retryChange(job: JobFacts, now: number): JobChange | Refused {
  if (job.status !== 'FAILED' && job.status !== 'TIMED_OUT') {
    const error = new ServerlessWorkerError('SW_RETRY_NOT_ALLOWED', `Job ${job.id} is ${job.status}; only FAILED or TIMED_OUT jobs can be retried`, {
      jobId: job.id,
      status: job.status,
    });
    return { kind: 'refused', error };
  }
  return requeueChange(job, 'retry', Number.POSITIVE_INFINITY, now);
}

/** The ttl passed: the job is deleted in any state; the stop its running worker gets, if any. */
export function expiryStop(job: Pick<StoredJob, 'status' | 'workerId'>): StopReason | undefined {
  return job.status === 'IN_PROGRESS' && job.workerId !== undefined ? 'expired' : undefined;
}

/** The stop order of a change, or undefined. */
export function stopOrderOf(job: Pick<StoredJob, 'endpointId' | 'id' | 'attempt'>, change: JobChange): StopOrder | undefined {
  if (change.stop === undefined || change.releasedFrom === undefined) return undefined;
  return { endpointId: job.endpointId, workerId: change.releasedFrom, jobId: job.id, reason: change.stop, attempt: job.attempt };
}

/** The events a change emits, in order: the released worker, the job, the queue, the stop. */
export function changeEvents(job: Pick<StoredJob, 'endpointId' | 'id' | 'attempt'>, change: JobChange): StoreEvent[] {
  const { endpointId } = job;
  const events: StoreEvent[] = [];
  if (change.releasedFrom !== undefined) events.push({ type: 'worker', endpointId, workerId: change.releasedFrom });
  events.push({ type: 'changed', endpointId, jobId: job.id, status: change.fields.status });
  if (change.kind !== 'ended') events.push({ type: 'queued', endpointId });
  const stop = stopOrderOf(job, change);
  if (stop) events.push({ type: 'stop', ...stop });
  return events;
}

function released(job: JobFacts): { releasedFrom?: string } {
  return job.workerId !== undefined ? { releasedFrom: job.workerId } : {};
}

function withStop(change: JobChange, stop: StopReason): JobChange {
  return change.releasedFrom !== undefined ? { ...change, stop } : change;
}
