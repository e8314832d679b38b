/**
 * @module harness/store/postgres/postgres-job-store
 * The job store on PostgreSQL: several harness processes on one database share every
 * endpoint's queue, and jobs survive a restart. Each changing call is one transaction;
 * a call about one job locks its row (`FOR UPDATE`) and applies the in-memory store's
 * rules to it (job-changes.ts, caller-changes.ts; retried transactions: transactions.ts);
 * `take` claims queued jobs with `FOR UPDATE SKIP LOCKED` (joined-takes.ts), so each job
 * has exactly one taker across processes; the time rules are applied once (due-rules.ts).
 * Events go to every process with LISTEN/NOTIFY (notifications.ts), in the hot statements
 * themselves (statement-notices.ts) or after the commit, and only while another harness
 * listens (store-listening.ts, which also checks this process's clock against the database's).
 * sw_jobs's planner statistics follow its growth (fresh-statistics.ts); the job tables are
 * vacuumed as jobs end and truncated when a cleanup left them empty (job-table-vacuum.ts).
 * Submissions are in submissions.ts, a worker's other changes in worker-changes.ts, reads
 * in reads.ts, worker presence in workers.ts. It runs on the process's one
 * database handle (harness/postgres/database.ts), which its opener closes.
 */
import {
  type ChangeOutcome,
  type DueOutcome,
  type EndpointSettings,
  type GoneWorker,
  type HealthCounts,
  type Job,
  type JobRequest,
  type JobResult,
  type JobStore,
  type ListPage,
  type ListQuery,
  type PostAck,
  type RequeueRules,
  type ResultAck,
  type StateCounts,
  type StoredJob,
  type StoredWorker,
  type StoreEvent,
  type StreamChunk,
  type StreamRead,
  type SubmitOptions,
  type TouchWorker,
} from 'serverless-worker/internal';
import type postgres from 'postgres';
import type { PostgresDatabase } from '../../postgres/database.js';
import { completeJob, TakenFacts } from './completion.js';
import { applyAllDue, nextDueAt } from './due-rules.js';
import { changeInTransaction } from './transactions.js';
import { createEndpoint, deleteEndpoint, endpointSettings, listEndpoints } from './endpoints.js';
import { type Changes, type Tx } from './job-changes.js';
import { StoreEventHub } from './notifications.js';
import { PEER_TIMES, type PeerTimes } from './peers.js';
import { MAX_CLOCK_SKEW_MS } from './clock-skew.js';
import { checkClockAtOpen, StoreListening } from './store-listening.js';
import { JoinedTakes } from './joined-takes.js';
import { MAINTENANCE_LIMITS, MaintenanceCheck, type MaintenanceLimits } from './maintenance-check.js';
import { cancelJob, purgeQueued, retryJob, setJobTtl } from './caller-changes.js';
import { SUBMIT_WAIT_MS, Submissions } from './submissions.js';
import { FreshStatistics } from './fresh-statistics.js';
import { JOB_TABLE_LIMITS, JobTableVacuum, type JobTableLimits } from './job-table-vacuum.js';
import { ResultWrites } from './result-writes.js';
import { TakeWrites } from './take-writes.js';
import { readJob, readList, readStateCounts, readHealth, readStream, peekStream } from './reads.js';
import { giveBackJob, progressChange, pushChunkChange, requeueLostJob } from './worker-changes.js';
import { getWorker, listWorkers, removeWorker, sweepSilentWorkers, touchWorker, touchWorkerAtOnce, unreportedJobs } from './workers.js';

export interface PostgresJobStoreOptions {
  /** Errors of the LISTEN connection and of notifications (the store goes on). */
  readonly onError?: (error: unknown) => void;
  /** How often peers say they are alive and how long one may be silent (peers.ts); tests shorten them. */
  readonly peerTimes?: PeerTimes;
  /**
   * The clock the harness passes as `now` (epoch ms). Given, it is measured against
   * PostgreSQL's when the store opens (open rejects beyond `maxClockSkewMs`) and each time
   * the LISTEN connection comes back (beyond it, changing calls reject until a later
   * measure is within it). Left out: not measured (a harness on a clock of its own).
   */
  readonly clock?: { now(): number };
  /** The bound on the clock's skew, ms; default 2 000 (clock-skew.ts). */
  readonly maxClockSkewMs?: number;
  /** How long a submission may wait for its statement to be sent, ms; default SUBMIT_WAIT_MS (3 000). */
  readonly submitWaitMs?: number;
  /** Given: the maintenance check runs (maintenance-check.ts) and warns through `warn`, within `limits` (default MAINTENANCE_LIMITS). */
  readonly maintenance?: { readonly warn: (message: string) => void; readonly limits?: Partial<MaintenanceLimits> };
  /** The job tables' VACUUM and TRUNCATE by the store (job-table-vacuum.ts); default JOB_TABLE_LIMITS (a VACUUM every 1 000 jobs, empty tables truncated). */
  readonly jobTables?: Partial<JobTableLimits>;
}

export { SUBMIT_WAIT_MS } from './submissions.js';

export class PostgresJobStore implements JobStore {
  readonly kind = 'postgres';
  readonly #sql: postgres.Sql;
  readonly #hub = new StoreEventHub();
  readonly #listening: StoreListening;
  readonly #taken = new TakenFacts();
  readonly #submissions: Submissions;
  readonly #resultWrites: ResultWrites;
  readonly #takeWrites = new TakeWrites();
  readonly #takes: JoinedTakes;
  readonly #statistics: FreshStatistics;
  readonly #jobTables: JobTableVacuum;
  #maintenance: MaintenanceCheck | undefined;
  #closed = false;

  private constructor(sql: postgres.Sql, onError: (error: unknown) => void, peerTimes: PeerTimes, submitWaitMs: number, jobTables: JobTableLimits) {
    this.#sql = sql;
    this.#listening = new StoreListening(sql, this.#hub, peerTimes, onError, () => this.listEndpoints());
    const statistics = (this.#statistics = new FreshStatistics(sql, onError));
    this.#jobTables = new JobTableVacuum(sql, onError, () => statistics.analyze(), jobTables);
    const notices = this.#listening.notices;
    this.#submissions = new Submissions(sql, notices, statistics, submitWaitMs);
    this.#resultWrites = new ResultWrites(sql, notices);
    const giveBack = (endpointId: string, jobId: string, workerId: string, attempt: number): Promise<boolean> =>
      this.returnJob(endpointId, jobId, workerId, attempt);
    this.#takes = new JoinedTakes(sql, this.#taken, this.#takeWrites, (events) => this.#hub.emit(events), giveBack, onError, notices);
    // Events may have been missed (the LISTEN connection was lost): endpoints and workers deleted meanwhile are written again.
    this.#hub.subscribe((event) => {
      if (event.type === 'resync') this.#takeWrites.forgetAll();
      this.#takes.onEvent(event);
    });
  }

  /** The store on `database` (opened and migrated by the caller), listening for other processes' events. */
  static async open(database: PostgresDatabase, options: PostgresJobStoreOptions = {}): Promise<PostgresJobStore> {
    const watched = options.clock ? { clock: options.clock, maxSkewMs: options.maxClockSkewMs ?? MAX_CLOCK_SKEW_MS } : undefined;
    if (watched) await checkClockAtOpen(database.sql, watched);
    const onError = options.onError ?? (() => undefined);
    const jobTables = { ...JOB_TABLE_LIMITS, ...options.jobTables };
    const store = new PostgresJobStore(database.sql, onError, options.peerTimes ?? PEER_TIMES, options.submitWaitMs ?? SUBMIT_WAIT_MS, jobTables);
    await store.#listening.listen(() => store.listEndpoints(), watched);
    // Statistics before the first statement is planned (a database just migrated has none: fresh-statistics.ts).
    await store.#statistics.check();
    if (options.maintenance) {
      const limits = { ...MAINTENANCE_LIMITS, ...options.maintenance.limits };
      store.#maintenance = new MaintenanceCheck(database.sql, limits, options.maintenance.warn, options.onError ?? (() => undefined));
      store.#maintenance.start();
    }
    return store;
  }

  // -------------------------------------------------------------- endpoints

  async createEndpoint(endpointId: string, settings?: EndpointSettings): Promise<void> {
    await createEndpoint(this.#sql, endpointId, settings);
    this.#takeWrites.endpointExists(endpointId);
  }

  async deleteEndpoint(endpointId: string): Promise<boolean> {
    this.#takeWrites.forgetEndpoint(endpointId);
    this.#takes.forgetEndpoint(endpointId);
    const deleted = await deleteEndpoint(this.#sql, endpointId);
    // Its jobs went with it (how many is not counted): the tables may be empty now.
    if (deleted) this.#jobTables.jobsGone(0, 1);
    return deleted;
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
    const { job, events } = await this.#submissions.submit(endpointId, request, options, now);
    this.#takeWrites.endpointExists(endpointId);
    this.#hub.emit(events);
    return job;
  }

  /**
   * Takes made together (one turn of the event loop, or while a take statement is in
   * flight) go in one statement per endpoint and worker (a worker of concurrency n asks n
   * times): the oldest jobs go to the earliest call, each gets up to its `max`.
   */
  async take(endpointId: string, workerId: string, max: number, now: number): Promise<Job[]> {
    this.#open();
    return this.#takes.take(endpointId, workerId, max, now);
  }

  // -------------------------------------------------------------- while running

  async pushChunk(endpointId: string, jobId: string, workerId: string | undefined, chunk: StreamChunk, attempt: number | undefined): Promise<PostAck> {
    this.#open();
    return this.#change((tx, changes) => pushChunkChange(tx, changes, { endpointId, jobId, workerId, attempt }, chunk));
  }

  async progress(endpointId: string, jobId: string, workerId: string | undefined, output: unknown, attempt: number | undefined): Promise<PostAck> {
    this.#open();
    return this.#change((tx, changes) => progressChange(tx, changes, { endpointId, jobId, workerId, attempt }, output));
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
    // Other harnesses were told by the result statement itself (statement-notices.ts).
    this.#hub.emit(done.events);
    this.#jobTables.jobsGone(done.ended.length, 0);
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
    const cancelled = await this.#change((tx, changes) => cancelJob(tx, changes, endpointId, jobId, now));
    this.#jobTables.jobsGone(cancelled.ended.length, 0);
    this.#taken.forgetJobs(cancelled.ended);
    return cancelled;
  }

  retry(endpointId: string, jobId: string, now: number): Promise<StoredJob> {
    this.#open();
    return this.#change((tx, changes) => retryJob(tx, changes, endpointId, jobId, now));
  }

  setTtl(endpointId: string, jobId: string, ttlMs: number, now: number): Promise<StoredJob> {
    this.#open();
    return this.#change((tx, changes) => setJobTtl(tx, changes, endpointId, jobId, ttlMs, now));
  }

  async purgeQueue(endpointId: string): Promise<number> {
    this.#open();
    const purged = await this.#change((tx, changes) => purgeQueued(tx, changes, endpointId));
    this.#jobTables.jobsGone(0, purged);
    return purged;
  }

  // -------------------------------------------------------------- lost jobs and workers

  async requeueJob(
    endpointId: string,
    jobId: string,
    workerId: string,
    rules: RequeueRules,
    now: number,
  ): Promise<{ readonly requeued: boolean } & ChangeOutcome> {
    this.#open();
    const lost = await this.#change((tx, changes) => requeueLostJob(tx, changes, { endpointId, jobId, workerId }, rules, now));
    // Lost to this worker either way: a result from it is judged on the row.
    this.#taken.forget(endpointId, jobId);
    return lost;
  }

  async returnJob(endpointId: string, jobId: string, workerId: string, attempt: number): Promise<boolean> {
    this.#open();
    return this.#change((tx, changes) => giveBackJob(tx, changes, { endpointId, jobId, workerId, attempt }, () => this.#taken.forget(endpointId, jobId)));
  }

  async touchWorker(endpointId: string, workerId: string, touch: TouchWorker, now: number): Promise<StoredWorker> {
    this.#open();
    this.#takeWrites.forgetWorker(endpointId, workerId);
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
    this.#takeWrites.forgetWorker(endpointId, workerId);
    // Jobs claimed ahead for it never reached it: back in the queue, not counted as lost.
    await this.#takes.release((reserve) => reserve.endpointId === endpointId && reserve.workerId === workerId);
    const gone = await this.#change((tx, changes) => removeWorker(tx, endpointId, workerId, rules, now, changes));
    if (gone) this.#taken.forgetGone(gone);
    return gone;
  }

  async sweepSilentWorkers(silentBefore: number, rules: RequeueRules, now: number): Promise<GoneWorker[]> {
    this.#open();
    const gone = await this.#change((tx, changes) => sweepSilentWorkers(tx, silentBefore, rules, now, changes));
    for (const worker of gone) {
      this.#takeWrites.forgetWorker(worker.endpointId, worker.workerId);
      this.#taken.forgetGone(worker);
    }
    return gone;
  }

  unreportedJobs(endpointId: string, workerId: string, unreportedBefore: number): Promise<string[]> {
    return unreportedJobs(this.#sql, endpointId, workerId, unreportedBefore);
  }

  // -------------------------------------------------------------- time

  /** The earliest deadline; none means no job at all (every job has a ttl): the job tables are then truncated if jobs were deleted since the last try (job-table-vacuum.ts). */
  async nextDueAt(): Promise<number | undefined> {
    const due = await nextDueAt(this.#sql);
    if (due === undefined && !this.#closed) this.#jobTables.seenEmpty();
    return due;
  }

  /** The deadlines due at `now`, in short transactions (due-rules.ts), their events published batch by batch. */
  async applyDue(now: number): Promise<DueOutcome> {
    this.#open();
    const outcome = await applyAllDue(
      this.#sql,
      now,
      (events) => this.#publish(events),
      () => this.#open(),
    );
    this.#jobTables.jobsGone(outcome.ended.length, outcome.deleted.length);
    this.#taken.forgetJobs(outcome.ended);
    this.#taken.forgetJobs(outcome.deleted);
    return outcome;
  }

  /** Settles when the job tables' VACUUM or TRUNCATE under way, and any asked for meanwhile, are done (job-table-vacuum.ts). */
  jobTablesSettled(): Promise<void> {
    return this.#jobTables.settled();
  }

  // -------------------------------------------------------------- events and life

  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.#hub.subscribe(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // Jobs claimed ahead and never handed out: back in the queue while the store can still write.
    await this.#takes.release();
    this.#closed = true;
    this.#maintenance?.close();
    await this.#jobTables.close();
    // The connections are the database handle's: its opener closes it.
    await this.#listening.close();
  }

  // -------------------------------------------------------------- internals

  #open(): void {
    if (this.#closed) throw new Error('The job store is closed');
    const refused = this.#listening.refused;
    if (refused) throw refused;
  }

  /** Hand committed changes' events to this process's listeners, then send them to the other processes. */
  #publish(events: readonly StoreEvent[]): void {
    this.#hub.emit(events);
    this.#listening.outbox.send(events);
  }

  #change<T>(work: (tx: Tx, changes: Changes) => Promise<T>): Promise<T> {
    return changeInTransaction(this.#sql, work, (events) => this.#publish(events));
  }
}
