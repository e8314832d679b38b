/**
 * @module harness/dashboard/all-jobs
 * Jobs across endpoints, and bulk actions on every job a filter matches.
 *
 * The list across endpoints is made from each endpoint's own list (the store's `list`,
 * in SQL on PostgreSQL): each endpoint answers its first `offset + limit` matching jobs
 * in the asked order, and these are merged (each endpoint's order kept, the heads
 * compared by the order's figure). So no store query is added, and both stores answer it
 * alike. It reads `offset + limit` jobs per endpoint: the page's offset is capped
 * (ALL_JOBS_MAX_OFFSET) to keep a deep page bounded; a narrower filter reaches further.
 *
 * Bulk: `matchingJobs` answers every job the filter matches (at most BULK_MAX_JOBS),
 * the page confirms that count, then `applyBulk` cancels or retries exactly those jobs.
 */
import { type EndpointJobs, type Harness, type ListQuery, orderFigure, ServerlessWorkerError, type StoredJob } from 'serverless-worker/internal';
import { listedJob, type ListedJob } from './views.js';

/** The deepest page of the list across endpoints (offset), so that one page reads at most this many jobs per endpoint. */
export const ALL_JOBS_MAX_OFFSET = 10_000;
/** Jobs one bulk action may touch (a narrower filter, or several actions, for more). */
export const BULK_MAX_JOBS = 10_000;
/** Jobs read per store call while collecting a bulk action's jobs. */
const BULK_PAGE = 500;

/** A page of jobs across endpoints: each row names its endpoint. */
export interface AllJobsPage {
  /** The endpoints listed (all of them unless the filter named some). */
  endpointIds: string[];
  total: number;
  offset: number;
  limit: number;
  jobs: ListedJob[];
}

/** The endpoints a list covers: those named (that exist), else all, by id. */
function endpointsOf(harness: Harness, only: readonly string[] | undefined): EndpointJobs[] {
  const all = [...harness.endpoints()].sort((a, b) => a.id.localeCompare(b.id));
  return only === undefined || only.length === 0 ? all : all.filter((endpoint) => only.includes(endpoint.id));
}

/** Whether `a` comes before `b` in `order` (both lists' heads; ties: newest, then endpoint id). */
function before(a: StoredJob, b: StoredJob, order: ListQuery['order']): boolean {
  if (order === 'slowest' || order === 'waited') {
    const fa = orderFigure(a, order) ?? Number.NEGATIVE_INFINITY;
    const fb = orderFigure(b, order) ?? Number.NEGATIVE_INFINITY;
    if (fa !== fb) return fa > fb;
  } else if (a.submittedAt !== b.submittedAt) {
    return order === 'oldest' ? a.submittedAt < b.submittedAt : a.submittedAt > b.submittedAt;
  }
  if (a.submittedAt !== b.submittedAt) return a.submittedAt > b.submittedAt;
  // Same millisecond on two endpoints: by endpoint id, the other way round oldest first (so that it is newest first reversed).
  return order === 'oldest' ? a.endpointId > b.endpointId : a.endpointId < b.endpointId;
}

/** Merge lists each in `order` into one in `order` (each list's own order kept). */
function merge(lists: ReadonlyArray<readonly StoredJob[]>, order: ListQuery['order'], count: number): StoredJob[] {
  const at = lists.map(() => 0);
  const out: StoredJob[] = [];
  while (out.length < count) {
    let best = -1;
    for (let i = 0; i < lists.length; i += 1) {
      const head = lists[i]?.[at[i] ?? 0];
      if (head === undefined) continue;
      const current = best >= 0 ? lists[best]?.[at[best] ?? 0] : undefined;
      if (current === undefined || before(head, current, order)) best = i;
    }
    if (best < 0) break;
    const job = lists[best]?.[at[best] ?? 0];
    if (job === undefined) break;
    out.push(job);
    at[best] = (at[best] ?? 0) + 1;
  }
  return out;
}

/** A page of the jobs of `endpointIds` (default all endpoints) matching `query`, in its order. */
export async function allJobsPage(harness: Harness, endpointIds: readonly string[] | undefined, query: ListQuery): Promise<AllJobsPage> {
  if (query.offset > ALL_JOBS_MAX_OFFSET) {
    throw new ServerlessWorkerError(
      'SW_INVALID_REQUEST',
      `offset must be at most ${ALL_JOBS_MAX_OFFSET} in the list across endpoints (narrow the filter, or list one endpoint, to reach further)`,
      {
        offset: query.offset,
        max: ALL_JOBS_MAX_OFFSET,
      },
    );
  }
  const endpoints = endpointsOf(harness, endpointIds);
  const pages = await Promise.all(endpoints.map((endpoint) => endpoint.list({ ...query, offset: 0, limit: query.offset + query.limit })));
  const merged = merge(
    pages.map((page) => page.jobs),
    query.order,
    query.offset + query.limit,
  );
  return {
    endpointIds: endpoints.map((endpoint) => endpoint.id),
    total: pages.reduce((sum, page) => sum + page.total, 0),
    offset: query.offset,
    limit: query.limit,
    jobs: merged.slice(query.offset).map(listedJob),
  };
}

/** A job a bulk action names. */
export interface JobRef {
  endpointId: string;
  id: string;
}

/** Every job matching the filter, as the bulk confirm counts them. */
export interface MatchingJobs {
  total: number;
  /** The jobs (all of them unless `total` is over BULK_MAX_JOBS). */
  jobs: JobRef[];
  max: number;
}

/** Every job of `endpointIds` (default all) matching `query` (its offset and limit ignored), up to BULK_MAX_JOBS. */
export async function matchingJobs(
  harness: Harness,
  endpointIds: readonly string[] | undefined,
  query: Omit<ListQuery, 'offset' | 'limit'>,
): Promise<MatchingJobs> {
  const jobs: JobRef[] = [];
  let total = 0;
  for (const endpoint of endpointsOf(harness, endpointIds)) {
    // Collected before any change: the actions below move jobs out of (or into) the filter.
    for (let offset = 0; ; offset += BULK_PAGE) {
      const page = await endpoint.list({ ...query, offset, limit: BULK_PAGE });
      if (offset === 0) total += page.total;
      for (const job of page.jobs) if (jobs.length < BULK_MAX_JOBS) jobs.push({ endpointId: endpoint.id, id: job.id });
      if (page.jobs.length < BULK_PAGE || jobs.length >= BULK_MAX_JOBS) break;
    }
  }
  return { total, jobs, max: BULK_MAX_JOBS };
}

export type BulkAction = 'cancel' | 'retry';

export interface BulkOutcome {
  action: BulkAction;
  /** Jobs asked. */
  asked: number;
  /** Jobs changed (cancelled, or back in the queue). */
  done: number;
  /** Jobs refused, with the API's code and message (a cancel of an ended job, a job gone). */
  refused: Array<JobRef & { code: string; message: string }>;
}

/** Jobs changed at once (each is one store change). */
const BULK_CONCURRENCY = 16;

/** Cancel or retry each of `jobs`; answers what became of each (never throws for one job). */
export async function applyBulk(harness: Harness, action: BulkAction, jobs: readonly JobRef[]): Promise<BulkOutcome> {
  const refused: BulkOutcome['refused'] = [];
  let done = 0;
  let next = 0;
  const one = async (ref: JobRef): Promise<void> => {
    const endpoint = harness.findEndpoint(ref.endpointId);
    try {
      if (!endpoint) throw new ServerlessWorkerError('SW_ENDPOINT_NOT_FOUND', `Endpoint ${ref.endpointId} not found`, { endpointId: ref.endpointId });
      if (action === 'cancel') await endpoint.cancel(ref.id);
      else await endpoint.retry(ref.id);
      done += 1;
    } catch (error) {
      const code = error instanceof ServerlessWorkerError ? error.code : 'SW_INTERNAL';
      refused.push({ ...ref, code, message: error instanceof Error ? error.message : String(error) });
    }
  };
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const ref = jobs[next];
      next += 1;
      if (ref) await one(ref);
    }
  };
  await Promise.all(Array.from({ length: Math.min(BULK_CONCURRENCY, jobs.length) }, lane));
  return { action, asked: jobs.length, done, refused };
}
