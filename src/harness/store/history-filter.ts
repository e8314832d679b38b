/**
 * @module harness/store/history-filter
 * The request list's history filters (ListQuery's optional fields beyond state and id):
 * the worker that ran a job, how it was submitted, its error code, a submission time
 * range, text in its request (input, webhook, policy) or output, and the order. The in-memory store applies them
 * with `matchesHistory`; the PostgreSQL store turns the same fields into SQL
 * (postgres/reads.ts), so both answer the same pages (the conformance suite checks it).
 */
import { requestJsonText } from '../../job/index.js';
import type { ListQuery, StoredJob } from './store-types.js';

/** The fields `matchesHistory` reads (a StoredJob, or the in-memory store's record). */
export type HistoryJob = Pick<StoredJob, 'request' | 'sync' | 'submittedAt' | 'workerId' | 'resultFrom' | 'cancelledFrom' | 'error' | 'output'>;

/** Whether `query` asks for any history filter or the oldest-first order (the slow path: every job kept is looked at). */
export function hasHistoryFilter(query: ListQuery): boolean {
  return (
    query.workerId !== undefined ||
    query.kind !== undefined ||
    query.errorCode !== undefined ||
    query.submittedFrom !== undefined ||
    query.submittedTo !== undefined ||
    (query.text !== undefined && query.text.trim() !== '') ||
    (query.order !== undefined && query.order !== 'newest')
  );
}

/** The figure a `slowest` or `waited` order sorts by (execution or queue wait, ms), undefined when the job has none yet. */
export function orderFigure(job: Pick<StoredJob, 'queuedAt' | 'startedAt' | 'endedAt'>, order: ListQuery['order']): number | undefined {
  if (order === 'slowest') return job.endedAt !== undefined && job.startedAt !== undefined ? job.endedAt - job.startedAt : undefined;
  if (order === 'waited') return job.startedAt !== undefined ? job.startedAt - job.queuedAt : undefined;
  return undefined;
}

/**
 * Jobs (newest first) in `order`: as they are, reversed, or by the order's figure, largest
 * first, jobs without one last (a stable sort: ties stay newest first).
 */
export function inOrder<T extends Pick<StoredJob, 'queuedAt' | 'startedAt' | 'endedAt'>>(newestFirst: T[], order: ListQuery['order']): T[] {
  if (order === undefined || order === 'newest') return newestFirst;
  if (order === 'oldest') return newestFirst.reverse();
  const figure = (job: T) => orderFigure(job, order) ?? Number.NEGATIVE_INFINITY;
  return newestFirst.sort((a, b) => figure(b) - figure(a));
}

/** The worker that ran the job: its holder while it runs, else the one whose result ended it, else the one it was cancelled on, else the error's. */
export function ranOn(job: HistoryJob): string | undefined {
  return job.workerId ?? job.resultFrom?.workerId ?? job.cancelledFrom ?? (job.error?.worker_id || undefined);
}

/** Whether `job` passes the history filters of `query` (states and id search are the store's own). */
export function matchesHistory(job: HistoryJob, query: ListQuery): boolean {
  if (query.workerId !== undefined && ranOn(job) !== query.workerId) return false;
  if (query.kind !== undefined && (query.kind === 'runsync') !== job.sync) return false;
  if (query.errorCode !== undefined && !(job.error?.error_code ?? '').startsWith(query.errorCode)) return false;
  if (query.submittedFrom !== undefined && job.submittedAt < query.submittedFrom) return false;
  if (query.submittedTo !== undefined && job.submittedAt >= query.submittedTo) return false;
  const text = query.text?.trim().toLowerCase();
  if (text) {
    // The request's JSON text (input, webhook, policy), as the PostgreSQL store searches it.
    const input = requestJsonText(job.request).toLowerCase();
    if (
      !input.includes(text) &&
      !(job.output !== undefined && (JSON.stringify(job.output) ?? '').toLowerCase().includes(text)) &&
      !(job.error !== undefined && JSON.stringify(job.error).toLowerCase().includes(text))
    ) {
      return false;
    }
  }
  return true;
}
