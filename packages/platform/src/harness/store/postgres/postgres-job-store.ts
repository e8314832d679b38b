/**
 * @module harness/store/postgres/postgres-job-store
 * The job store on PostgreSQL: several harness processes on one database share every
 * endpoint's queue, and jobs survive a restart. Each changing call is one transaction;
 * a call about one job locks its row (`FOR UPDATE`) and applies the in-memory store's
 * rules to it (job-changes.ts); `take` claims queued jobs with `FOR UPDATE SKIP LOCKED`,
 * so each job has exactly one taker across processes; the time rules are applied once
 * (due-rules.ts). Events go to every process with LISTEN/NOTIFY (notifications.ts), sent
 * after the commit (notification-outbox.ts).
 * Reads are in reads.ts, worker presence in workers.ts. It runs on the process's one
 * database handle (harness/postgres/database.ts), which its opener closes.
 */
import { newJobId } from 'serverless-worker/internal/harness/store/job-id.js';
import { systemClock, withinTime } from 'serverless-worker/internal/clock/index.js';
import postgres from 'postgres';
import type { PostgresDatabase } from '../../postgres/database.js';
import { requestJsonText, type Job, type JobRequest, type JobResult, type StreamChunk } from 'serverless-worker/internal/job/index.js';
import { stampAttempt } from 'serverless-worker/internal/harness/store/attempts.js';
import { toDelivery } from 'serverless-worker/internal/harness/store/job-record.js';
import { ownedRequest } from 'serverless-worker/internal/harness/store/memory-records.js';
import type {
  ChangeOutcome, DueOutcome, EndpointSettings, GoneWorker, HealthCounts, JobStore, ListPage, ListQuery, PostAck, RequeueRules, ResultAck,
  StateCounts, StoreEvent, StoredJob, StoredWorker, StreamRead, SubmitOptions, TouchWorker,
} from 'serverless-worker/internal/harness/store/job-store.js';
import { refusedChunk, refusedProgress } from 'serverless-worker/internal/harness/store/post-rules.js';
import { completeJob, TakenFacts } from './completion.js';
import { applyDue, nextDueAt } from './due-rules.js';
import { createEndpoint, deleteEndpoint, endpointSettings, listEndpoints } from './endpoints.js';
import { cancelChange, giveBackChange, queuedJob, retryChange } from 'serverless-worker/internal/harness/store/job-rules.js';
import { applyChange, changed, jsonb, lockJob, newChanges, requeueLost, saveChanged, finishChanges, saveJob, stored, type Changes, type Tx, type TxJob } from './job-changes.js';
import { NotificationOutbox } from './notification-outbox.js';
import { StoreEventHub } from './notifications.js';
import { Coalescer } from './coalescer.js';
import { ClaimedRow, claimJobs, insertJobs, type NewJob } from './queue.js';
import { ResultWrites } from './result-writes.js';
import { jobNotFound, readJob, readList, readStateCounts, readHealth, readStream, peekStream } from './reads.js';
import { getWorker, listWorkers, removeWorker, sweepSilentWorkers, touchWorker, touchWorkerAtOnce, unreportedJobs } from './workers.js';

export interface PostgresJobStoreOptions {
  /** Errors of the LISTEN connection and of notifications (the store goes on). */
  readonly onError?: (error: unknown) => void;
}

/** Submissions joined in one statement at most: their count, and their requests' JSON bytes (a larger one goes alone). */
const SUBMIT_BATCH = { maxItems: 100, maxSize: 1 << 20 };

/** How long close() waits for the events still held to be sent, ms. */
const CLOSE_FLUSH_MS = 2_000;

/** PostgreSQL error codes a transaction is retried on: deadlock, serialization failure. */
const RETRIED_CODES = new Set(['40P01', '40001']);
const RETRIES = 3;

export class PostgresJobStore implements JobStore {
  readonly kind = 'postgres';
  readonly #sql: postgres.Sql;
  readonly #hub = new StoreEventHub();
  readonly #outbox: NotificationOutbox;
  readonly #taken = new TakenFacts();
  readonly #inserts: Coalescer<NewJob, string>;
  readonly #resultWrites: ResultWrites;
  #closed = false;

  private constructor(sql: postgres.Sql, onError: (error: unknown) => void) {
    this.#sql = sql;
    this.#outbox = new NotificationOutbox(sql, this.#hub.origin, onError);
    this.#inserts = new Coalescer(async (jobs) => {
      const inserted = new Set((await insertJobs(sql, jobs)).map((row) => String(row.id)));
      return jobs.flatMap((job) => (inserted.has(job.id) ? [job.id] : []));
    }, SUBMIT_BATCH);
    this.#resultWrites = new ResultWrites(sql);
  }

  /** The store on `database` (opened and migrated by the caller), listening for other processes' events. */
  static async open(database: PostgresDatabase, options: PostgresJobStoreOptions = {}): Promise<PostgresJobStore> {
    const onError = options.onError ?? (() => undefined);
    const store = new PostgresJobStore(database.sql, onError);
    await store.#hub.listen(database.sql, () => store.listEndpoints(), onError);
    return store;
  }

  // -------------------------------------------------------------- endpoints

  createEndpoint(endpointId: string, settings?: EndpointSettings): Promise<void> {
    return createEndpoint(this.#sql, endpointId, settings);
  }

  deleteEndpoint(endpointId: string): Promise<boolean> {
    return deleteEndpoint(this.#sql, endpointId);
  }

  listEndpoints(): Promise<string[]> {
    return listEndpoints(this.#sql);
  }

  endpointSettings(endpointId: string): Promise<EndpointSettings | undefined> {
    return endpointSettings(this.#sql, endpointId);
  }

  // -------------------------------------------------------------- submit / take

  async submit(endpointId: string, request: JobRequest, options: SubmitOptions, now: number): Promise<StoredJob> {
    this.#open();
    const sync = options.sync ?? false;
    // The request as given (its input may be kept as text: RawJson); the record built here, not read back.
    const job = queuedJob({ id: options.id ?? newJobId(sync), endpointId, request: ownedRequest(request), sync, waitMs: options.waitMs }, now);
    const { id, expiresAt, retentionMs } = job;
    const events: StoreEvent[] = [{ type: 'queued', endpointId, due: expiresAt }];
    // Other processes are told when a taker of this one is waiting (it takes the job at once); this process's takers are woken at once.
    const told: StoreEvent[] = options.takerWaiting === true ? [{ type: 'queued', endpointId, takerWaitingFor: id, due: expiresAt }] : events;
    const requestText = requestJsonText(request);
    await this.#inserts.add({ endpointId, id, requestText, policyTimeoutMs: request.policy?.executionTimeout, sync, now, expiresAt, retentionMs }, requestText.length);
    this.#hub.emit(events);
    this.#outbox.send(told);
    return job;
  }

  async take(endpointId: string, workerId: string, max: number, now: number): Promise<Job[]> {
    this.#open();
    const rows = await claimJobs(this.#sql, endpointId, workerId, max, now);
    const taken = rows.map((row) => ClaimedRow.parse(row)).sort((a, b) => a.queue_seq - b.queue_seq);
    const events: StoreEvent[] = taken.map((row) => ({ type: 'changed', endpointId, jobId: row.id, status: 'IN_PROGRESS', due: row.started_at + row.execution_timeout_ms }));
    if (taken.length > 0) events.push({ type: 'worker', endpointId, workerId });
    for (const row of taken) {
      this.#taken.remember({
        endpointId, id: row.id, status: 'IN_PROGRESS', workerId, startedAt: row.started_at, attempt: row.attempt, lost: row.lost,
        retries: row.retries, retentionMs: row.retention_ms, executionTimeoutMs: row.execution_timeout_ms,
      });
    }
    this.#publish(events);
    return taken.map((row) => toDelivery({ id: row.id, attempt: row.attempt, request: row.request }));
  }

  // -------------------------------------------------------------- while running

  async pushChunk(endpointId: string, jobId: string, workerId: string | undefined, chunk: StreamChunk, attempt: number | undefined): Promise<PostAck> {
    this.#open();
    return this.#change(async (tx, changes) => {
      const job = await lockJob(tx, endpointId, jobId);
      const refused = refusedChunk(job, workerId, chunk, attempt);
      if (refused || !job) return refused ?? { applied: false, reason: 'not_found' };
      await tx`INSERT INTO sw_chunks (endpoint_id, job_id, chunk) VALUES (${endpointId}, ${jobId}, ${jsonb(tx, stampAttempt(chunk, job.attempt))})`;
      await tx`UPDATE sw_jobs SET chunk_count = chunk_count + 1, unread_count = unread_count + 1 WHERE endpoint_id = ${endpointId} AND id = ${jobId}`;
      changed(changes, job);
      return { applied: true };
    });
  }

  async progress(endpointId: string, jobId: string, workerId: string | undefined, output: unknown, attempt: number | undefined): Promise<PostAck> {
    this.#open();
    return this.#change(async (tx, changes) => {
      const job = await lockJob(tx, endpointId, jobId);
      const refused = refusedProgress(job, workerId, attempt);
      if (refused || !job) return refused ?? { applied: false, reason: 'not_found' };
      await tx`UPDATE sw_jobs SET output = ${jsonb(tx, output)} WHERE endpoint_id = ${endpointId} AND id = ${jobId}`;
      changed(changes, job);
      return { applied: true };
    });
  }

  async complete(
    endpointId: string,
    jobId: string,
    workerId: string | undefined,
    result: JobResult,
    attempt: number | undefined,
    now: number,
  ): Promise<{ readonly ack: ResultAck } & ChangeOutcome> {
    this.#open();
    const known = this.#taken.take(endpointId, jobId, attempt);
    const done = await completeJob(this.#sql, this.#resultWrites, known, { endpointId, jobId, workerId, attempt, result, now });
    this.#publish(done.events);
    return { ack: done.ack, ended: done.ended, stops: [] };
  }

  // -------------------------------------------------------------- reading

  get(endpointId: string, jobId: string): Promise<StoredJob | undefined> {
    return readJob(this.#sql, endpointId, jobId);
  }

  readStream(endpointId: string, jobId: string): Promise<StreamRead> {
    return readStream(this.#sql, endpointId, jobId);
  }

  peekStream(endpointId: string, jobId: string): Promise<readonly StreamChunk[] | undefined> {
    return peekStream(this.#sql, endpointId, jobId);
  }

  list(endpointId: string, query: ListQuery): Promise<ListPage> {
    return readList(this.#sql, endpointId, query);
  }

  stateCounts(endpointId: string): Promise<StateCounts> {
    return readStateCounts(this.#sql, endpointId);
  }

  health(endpointId: string): Promise<HealthCounts> {
    return readHealth(this.#sql, endpointId);
  }

  // -------------------------------------------------------------- caller operations

  async cancel(endpointId: string, jobId: string, now: number): Promise<{ readonly job: StoredJob } & ChangeOutcome> {
    this.#open();
    return this.#change(async (tx, changes) => {
      const job = await this.#found(tx, endpointId, jobId);
      const change = cancelChange(job, now);
      if (change.kind === 'refused') throw change.error;
      if (change.kind !== 'unchanged') {
        applyChange(job, change, changes);
        await saveJob(tx, job);
      }
      return { job: stored(job), ended: changes.ended, stops: changes.stops };
    });
  }

  async retry(endpointId: string, jobId: string, now: number): Promise<StoredJob> {
    this.#open();
    return this.#change(async (tx, changes) => {
      const job = await this.#found(tx, endpointId, jobId);
      const change = retryChange(job, now);
      if (change.kind === 'refused') throw change.error;
      applyChange(job, change, changes);
      await saveChanged(tx, job);
      return stored(job);
    });
  }

  async setTtl(endpointId: string, jobId: string, ttlMs: number, now: number): Promise<StoredJob> {
    this.#open();
    return this.#change(async (tx, changes) => {
      const job = await this.#found(tx, endpointId, jobId);
      job.expiresAt = now + ttlMs;
      await tx`UPDATE sw_jobs SET expires_at = ${job.expiresAt} WHERE endpoint_id = ${endpointId} AND id = ${jobId}`;
      changed(changes, job);
      return stored(job);
    });
  }

  async purgeQueue(endpointId: string): Promise<number> {
    this.#open();
    return this.#change(async (tx, changes) => {
      const rows = await tx<{ id: string }[]>`DELETE FROM sw_jobs WHERE endpoint_id = ${endpointId} AND status = 'IN_QUEUE' RETURNING id`;
      for (const row of rows) changes.events.push({ type: 'changed', endpointId, jobId: row.id });
      return rows.length;
    });
  }

  // -------------------------------------------------------------- lost jobs and workers

  async requeueJob(endpointId: string, jobId: string, workerId: string, rules: RequeueRules, now: number): Promise<{ readonly requeued: boolean } & ChangeOutcome> {
    this.#open();
    return this.#change(async (tx, changes) => {
      const job = await lockJob(tx, endpointId, jobId);
      let requeued = false;
      if (job && job.status === 'IN_PROGRESS' && job.workerId === workerId) {
        requeued = requeueLost(job, rules.maxRequeues, now, changes);
        await saveChanged(tx, job);
      }
      return { requeued, ended: changes.ended, stops: changes.stops };
    });
  }

  async returnJob(endpointId: string, jobId: string, workerId: string, attempt: number): Promise<boolean> {
    this.#open();
    return this.#change(async (tx, changes) => {
      const job = await lockJob(tx, endpointId, jobId);
      if (!job || job.status !== 'IN_PROGRESS' || job.workerId !== workerId || job.attempt !== attempt) return false;
      this.#taken.forget(endpointId, jobId);
      applyChange(job, giveBackChange(job), changes);
      await saveJob(tx, job);
      return true;
    });
  }

  async touchWorker(endpointId: string, workerId: string, touch: TouchWorker, now: number): Promise<StoredWorker> {
    this.#open();
    if ((touch.reportedJobIds ?? []).length === 0) {
      const event: StoreEvent = { type: 'worker', endpointId, workerId };
      const { worker, created } = await touchWorkerAtOnce(this.#sql, endpointId, workerId, touch, now);
      if (created) this.#publish([event]);
      return worker;
    }
    return this.#change((tx, changes) => touchWorker(tx, endpointId, workerId, touch, now, changes));
  }

  getWorker(endpointId: string, workerId: string): Promise<StoredWorker | undefined> {
    return getWorker(this.#sql, endpointId, workerId);
  }

  listWorkers(endpointId: string): Promise<StoredWorker[]> {
    return listWorkers(this.#sql, endpointId);
  }

  async removeWorker(endpointId: string, workerId: string, rules: RequeueRules, now: number): Promise<GoneWorker | undefined> {
    this.#open();
    return this.#change((tx, changes) => removeWorker(tx, endpointId, workerId, rules, now, changes));
  }

  async sweepSilentWorkers(silentBefore: number, rules: RequeueRules, now: number): Promise<GoneWorker[]> {
    this.#open();
    return this.#change((tx, changes) => sweepSilentWorkers(tx, silentBefore, rules, now, changes));
  }

  unreportedJobs(endpointId: string, workerId: string, unreportedBefore: number): Promise<string[]> {
    return unreportedJobs(this.#sql, endpointId, workerId, unreportedBefore);
  }

  // -------------------------------------------------------------- time

  nextDueAt(): Promise<number | undefined> {
    return nextDueAt(this.#sql);
  }

  async applyDue(now: number): Promise<DueOutcome> {
    this.#open();
    return this.#change(async (tx, changes) => {
      await applyDue(tx, now, changes);
      return { ended: changes.ended, stops: changes.stops, deleted: changes.deleted };
    });
  }

  // -------------------------------------------------------------- events and life

  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.#hub.subscribe(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // The connections are the database handle's: its opener closes it.
    // The events still held go out first, unless the database does not answer.
    await withinTime(this.#outbox.flushed(), CLOSE_FLUSH_MS, undefined, systemClock, false);
    await this.#hub.close();
  }

  // -------------------------------------------------------------- internals

  #open(): void {
    if (this.#closed) throw new Error('The job store is closed');
  }

  async #found(tx: Tx, endpointId: string, jobId: string): Promise<TxJob> {
    const job = await lockJob(tx, endpointId, jobId);
    if (!job) throw jobNotFound(endpointId, jobId);
    return job;
  }

  /** Hand committed changes' events to this process's listeners, then send them to the other processes. */
  #publish(events: readonly StoreEvent[]): void {
    this.#hub.emit(events);
    this.#outbox.send(events);
  }

  /**
   * Run `work` in a transaction: its counter moves are saved in it; once it committed, its
   * events are published. Retried on a deadlock or serialization failure (nothing of a
   * failed try is kept).
   */
  async #change<T>(work: (tx: Tx, changes: Changes) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const changes = newChanges();
      try {
        const answer = (await this.#sql.begin(async (tx) => {
          const result = await work(tx, changes);
          await finishChanges(tx, changes);
          return result;
        })) as T;
        this.#publish(changes.events);
        return answer;
      } catch (error) {
        if (attempt >= RETRIES || !(error instanceof postgres.PostgresError) || !RETRIED_CODES.has(error.code)) throw error;
      }
    }
  }
}

