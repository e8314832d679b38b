/**
 * @module harness/store/postgres/submissions
 * The PostgreSQL store's submissions: each submit's row, joined with others made together
 * in one INSERT statement (coalescer.ts, queue.ts), under a deadline for the statement to be
 * sent (SUBMIT_WAIT_MS). While another harness listens, the submissions' events go in that
 * statement (statement-notices.ts); sw_jobs's growth is counted for its statistics
 * (fresh-statistics.ts).
 */
import {
  type JobRequest,
  newJobId,
  ownedRequest,
  queuedJob,
  requestJsonText,
  ServerlessWorkerError,
  type StoredJob,
  type StoreEvent,
  type SubmitOptions,
  systemClock,
} from 'serverless-worker/internal';
import type postgres from 'postgres';
import { databaseUnavailable } from '../../postgres/unavailable.js';
import { Coalescer } from './coalescer.js';
import type { FreshStatistics } from './fresh-statistics.js';
import { insertJobs, type NewJob } from './queue.js';
import type { StatementNotices } from './statement-notices.js';

/**
 * Submissions joined in one statement at most: their count, and their requests' JSON bytes
 * (a larger one goes alone). A statement that failed because the database cannot be reached
 * fails each of its submissions at once (none is run again alone: each would fail too).
 */
const SUBMIT_BATCH = { maxItems: 100, maxSize: 1 << 20, failsAll: (error: unknown) => databaseUnavailable(error) !== undefined };

/**
 * How long a submission may wait for its statement to be sent, ms (issue 49 item 3): past
 * it, a submission still waiting (behind a statement in flight, or to be run again after a
 * failed one) is withdrawn, never written, and answered 503 SW_STORE_UNAVAILABLE, so a
 * client that resends after its own timeout (5 s is usual) does not make a duplicate of a
 * submission that was stored late. A submission whose statement was sent gets that
 * statement's outcome.
 */
export const SUBMIT_WAIT_MS = 3_000;
/** Retry-After of that answer, s: the HTTP layer's for an unavailable store. */
const SUBMIT_RETRY_AFTER_S = 5;

/** A stored submission: its record (built here, not read back) and the events for this process's listeners. */
export interface Submitted {
  readonly job: StoredJob;
  readonly events: readonly StoreEvent[];
}

export class Submissions {
  readonly #inserts: Coalescer<NewJob, string>;
  readonly #waitMs: number;

  constructor(sql: postgres.Sql, notices: StatementNotices, statistics: FreshStatistics, waitMs: number = SUBMIT_WAIT_MS) {
    this.#waitMs = waitMs;
    this.#inserts = new Coalescer(async (jobs) => {
      // While another harness listens, the submissions' events go in their own statement (statement-notices.ts).
      // At most one statement a window notifies; the others' events ride on a later one (statement-notices.ts).
      const notice = notices.begin();
      const told = jobs.flatMap((job) => job.told);
      let rows: postgres.RowList<postgres.Row[]>;
      try {
        rows = await insertJobs(sql, jobs, notice.notify ? [...notice.carried, ...notices.payloads(told)] : []);
      } catch (error) {
        notice.done();
        throw error;
      }
      notice.done(told);
      const inserted = new Set(rows.map((row) => String(row.id)));
      statistics.inserted(inserted.size);
      return jobs.flatMap((job) => (inserted.has(job.id) ? [job.id] : []));
    }, SUBMIT_BATCH);
  }

  async submit(endpointId: string, request: JobRequest, options: SubmitOptions, now: number): Promise<Submitted> {
    const sync = options.sync ?? false;
    // The request as given (its input may be kept as text: RawJson); the record built here, not read back.
    const job = queuedJob({ id: options.id ?? newJobId(sync), endpointId, request: ownedRequest(request), sync, waitMs: options.waitMs }, now);
    const { id, expiresAt, retentionMs } = job;
    const events: StoreEvent[] = [{ type: 'queued', endpointId, due: expiresAt }];
    // Other processes are told when a taker of this one is waiting (it takes the job at once); this process's takers are woken at once.
    const told: StoreEvent[] = options.takerWaiting === true ? [{ type: 'queued', endpointId, takerWaitingFor: id, due: expiresAt }] : events;
    const requestText = requestJsonText(request);
    const waitMs = this.#waitMs;
    const waited = new AbortController();
    // The system clock's timer: a deadline of this process's own waiting, not a job rule (those take the harness's clock).
    const timer = systemClock.setTimer(waitMs, () =>
      waited.abort(
        new ServerlessWorkerError(
          'SW_STORE_UNAVAILABLE',
          `The job store did not take the submission within ${waitMs} ms (PostgreSQL is slow or unreachable); it was not stored: retry after ${SUBMIT_RETRY_AFTER_S} s`,
          { retryAfterSeconds: SUBMIT_RETRY_AFTER_S, waitedMs: waitMs },
        ),
      ),
    );
    try {
      await this.#inserts.add(
        { endpointId, id, requestText, policyTimeoutMs: request.policy?.executionTimeout, sync, now, expiresAt, retentionMs, told },
        requestText.length,
        undefined,
        waited.signal,
      );
    } finally {
      timer.cancel();
    }
    return { job, events };
  }
}
