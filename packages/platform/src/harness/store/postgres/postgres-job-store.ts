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
import { systemClock, withinTime, type TimerHandle } from 'serverless-worker/internal/clock/index.js';
import postgres from 'postgres';
import type { PostgresDatabase } from '../../postgres/database.js';
import { requestJsonText, type Job, type JobRequest, type JobResult, type StreamChunk } from 'serverless-worker/internal/job/index.js';
import { stampAttempt } from 'serverless-worker/internal/harness/store/attempts.js';
import { toDelivery } from 'serverless-worker/internal/harness/store/job-record.js';
import { ownedRequest } from 'serverless-worker/internal/harness/store/memory-records.js';
import type {
  ChangeOutcome,
  DueOutcome,
  EndpointSettings,
  GoneWorker,
  HealthCounts,
  JobStore,
  ListPage,
  ListQuery,
  PostAck,
  RequeueRules,
  ResultAck,
  StateCounts,
  StopOrder,
  StoreEvent,
  StoredJob,
  StoredWorker,
  StreamRead,
  SubmitOptions,
  TouchWorker,
} from 'serverless-worker/internal/harness/store/job-store.js';
import { refusedChunk, refusedProgress } from 'serverless-worker/internal/harness/store/post-rules.js';
import { completeJob, TakenFacts } from './completion.js';
import { applyTimeouts, nextDueAt, SWEEP_BATCH, sweepDue, TIMEOUT_BATCH } from './due-rules.js';
import { createEndpoint, deleteEndpoint, endpointSettings, listEndpoints } from './endpoints.js';
import { cancelChange, giveBackChange, queuedJob, retryChange } from 'serverless-worker/internal/harness/store/job-rules.js';
import {
  applyChange,
  changed,
  jsonb,
  lockJob,
  newChanges,
  requeueLost,
  saveChanged,
  finishChanges,
  saveJob,
  stored,
  type Changes,
  type Tx,
  type TxJob,
} from './job-changes.js';
import { NotificationOutbox } from './notification-outbox.js';
import { StoreEventHub } from './notifications.js';
import { PEER_TIMES, Peers, type PeerTimes } from './peers.js';
import { MAX_CLOCK_SKEW_MS, measureClockSkew, skewRefusal } from './clock-skew.js';
import { Coalescer } from './coalescer.js';
import { ClaimedRow, claimJobs, insertJobs, type NewJob } from './queue.js';
import { ResultWrites } from './result-writes.js';
import { TakeWrites } from './take-writes.js';
import { jobNotFound, readJob, readList, readStateCounts, readHealth, readStream, peekStream } from './reads.js';
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
}

/** While refused for skew: how often the clock is measured again, ms. */
const SKEW_RECHECK_MS = 10_000;

/** Submissions joined in one statement at most: their count, and their requests' JSON bytes (a larger one goes alone). */
const SUBMIT_BATCH = { maxItems: 100, maxSize: 1 << 20 };

/** Takes joined in one round at most (their claims run side by side, one per endpoint and worker). */
const TAKE_BATCH = { maxItems: 256, maxSize: 256 };

type TakeAnswer = { readonly jobs: Job[] } | { readonly error: unknown };

interface TakeCall {
  readonly endpointId: string;
  readonly workerId: string;
  readonly max: number;
  readonly now: number;
}

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
  readonly #peers: Peers;
  readonly #taken = new TakenFacts();
  readonly #inserts: Coalescer<NewJob, string>;
  readonly #resultWrites: ResultWrites;
  readonly #takeWrites = new TakeWrites();
  readonly #takes: Coalescer<TakeCall, TakeAnswer>;
  #closed = false;
  /** Set while this process's clock is too far from the database's (clock-skew.ts). */
  #refused: Error | undefined;
  #recheck: TimerHandle | undefined;

  private constructor(sql: postgres.Sql, onError: (error: unknown) => void, peerTimes: PeerTimes) {
    this.#sql = sql;
    this.#peers = new Peers(
      peerTimes,
      (message) => this.#outbox.sendControl(message),
      () => this.#hub.resync(() => this.listEndpoints(), onError),
    );
    this.#outbox = new NotificationOutbox(sql, this.#hub.origin, onError, () => this.#peers.any());
    this.#inserts = new Coalescer(async (jobs) => {
      const inserted = new Set((await insertJobs(sql, jobs)).map((row) => String(row.id)));
      return jobs.flatMap((job) => (inserted.has(job.id) ? [job.id] : []));
    }, SUBMIT_BATCH);
    this.#resultWrites = new ResultWrites(sql);
    this.#takes = new Coalescer((takes) => this.#claimTogether(takes), TAKE_BATCH);
    // Events may have been missed (the LISTEN connection was lost): endpoints and workers deleted meanwhile are written again.
    this.#hub.subscribe((event) => {
      if (event.type === 'resync') this.#takeWrites.forgetAll();
    });
  }

  /** The store on `database` (opened and migrated by the caller), listening for other processes' events. */
  static async open(database: PostgresDatabase, options: PostgresJobStoreOptions = {}): Promise<PostgresJobStore> {
    const onError = options.onError ?? (() => undefined);
    const { clock } = options;
    const maxSkewMs = options.maxClockSkewMs ?? MAX_CLOCK_SKEW_MS;
    if (clock) {
      const refused = skewRefusal(await measureClockSkew(database.sql, () => clock.now()), maxSkewMs);
      if (refused) throw refused;
    }
    const store = new PostgresJobStore(database.sql, onError, options.peerTimes ?? PEER_TIMES);
    const reconnected = clock ? () => store.#checkClock(clock, maxSkewMs, onError) : () => undefined;
    await store.#hub.listen(database.sql, () => store.listEndpoints(), onError, store.#peers, reconnected);
    return store;
  }

  // -------------------------------------------------------------- endpoints

  async createEndpoint(endpointId: string, settings?: EndpointSettings): Promise<void> {
    await createEndpoint(this.#sql, endpointId, settings);
    this.#takeWrites.endpointExists(endpointId);
  }

  deleteEndpoint(endpointId: string): Promise<boolean> {
    this.#takeWrites.forgetEndpoint(endpointId);
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
    await this.#inserts.add(
      { endpointId, id, requestText, policyTimeoutMs: request.policy?.executionTimeout, sync, now, expiresAt, retentionMs },
      requestText.length,
    );
    this.#takeWrites.endpointExists(endpointId);
    this.#hub.emit(events);
    this.#outbox.send(told);
    return job;
  }

  /**
   * Takes made together (one turn of the event loop, or while a take statement is in
   * flight) go in one statement per endpoint and worker (a worker of concurrency n asks n
   * times): the oldest jobs go to the earliest call, each gets up to its `max`.
   */
  async take(endpointId: string, workerId: string, max: number, now: number): Promise<Job[]> {
    this.#open();
    const answer = await this.#takes.add({ endpointId, workerId, max, now }, 1);
    if ('error' in answer) throw answer.error;
    return answer.jobs;
  }

  /** One claim for the takes of one endpoint and worker made together; answers each its jobs, in their order. */
  async #claim(takes: readonly TakeCall[]): Promise<Job[][]> {
    const { endpointId, workerId } = takes[0] as TakeCall;
    const now = Math.max(...takes.map((call) => call.now));
    const writes = this.#takeWrites.plan(endpointId, workerId, now);
    const rows = await claimJobs(
      this.#sql,
      endpointId,
      workerId,
      takes.reduce((sum, call) => sum + Math.max(0, call.max), 0),
      now,
      writes,
    );
    this.#takeWrites.taken(endpointId, workerId, now, writes);
    const taken = rows.map((row) => ClaimedRow.parse(row)).sort((a, b) => a.queue_seq - b.queue_seq);
    const events: StoreEvent[] = taken.map((row) => ({
      type: 'changed',
      endpointId,
      jobId: row.id,
      status: 'IN_PROGRESS',
      due: row.started_at + row.execution_timeout_ms,
    }));
    if (taken.length > 0) events.push({ type: 'worker', endpointId, workerId });
    for (const row of taken) {
      this.#taken.remember({
        endpointId,
        id: row.id,
        status: 'IN_PROGRESS',
        workerId,
        startedAt: row.started_at,
        attempt: row.attempt,
        lost: row.lost,
        retries: row.retries,
        retentionMs: row.retention_ms,
        executionTimeoutMs: row.execution_timeout_ms,
      });
    }
    this.#publish(events);
    const jobs = taken.map((row) => toDelivery({ id: row.id, attempt: row.attempt, request: row.request }));
    let next = 0;
    return takes.map((call) => {
      const own = jobs.slice(next, next + Math.max(0, call.max));
      next += own.length;
      return own;
    });
  }

  /**
   * The takes joined: those of each endpoint and worker in one claim, the claims side by
   * side. Never rejects: a claim that failed answers its takes its error (the others'
   * claims committed; the joiner must not run them again).
   */
  async #claimTogether(takes: readonly TakeCall[]): Promise<TakeAnswer[]> {
    const groups = new Map<string, number[]>();
    takes.forEach((call, index) => {
      const key = `${call.endpointId}\u0000${call.workerId}`;
      const group = groups.get(key);
      if (group) group.push(index);
      else groups.set(key, [index]);
    });
    const answers: TakeAnswer[] = takes.map(() => ({ jobs: [] }));
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        try {
          const claimed = await this.#claim(indexes.map((index) => takes[index] as TakeCall));
          indexes.forEach((index, at) => (answers[index] = { jobs: claimed[at] ?? [] }));
        } catch (error) {
          for (const index of indexes) answers[index] = { error };
        }
      }),
    );
    return answers;
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

  async requeueJob(
    endpointId: string,
    jobId: string,
    workerId: string,
    rules: RequeueRules,
    now: number,
  ): Promise<{ readonly requeued: boolean } & ChangeOutcome> {
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
    return this.#change((tx, changes) => removeWorker(tx, endpointId, workerId, rules, now, changes));
  }

  async sweepSilentWorkers(silentBefore: number, rules: RequeueRules, now: number): Promise<GoneWorker[]> {
    this.#open();
    const gone = await this.#change((tx, changes) => sweepSilentWorkers(tx, silentBefore, rules, now, changes));
    for (const worker of gone) this.#takeWrites.forgetWorker(worker.endpointId, worker.workerId);
    return gone;
  }

  unreportedJobs(endpointId: string, workerId: string, unreportedBefore: number): Promise<string[]> {
    return unreportedJobs(this.#sql, endpointId, workerId, unreportedBefore);
  }

  // -------------------------------------------------------------- time

  nextDueAt(): Promise<number | undefined> {
    return nextDueAt(this.#sql);
  }

  /**
   * The deadlines due at `now` in short transactions (due-rules.ts): the timeouts first,
   * a batch a transaction, then the ttl and retention sweep, a set-based statement of up
   * to SWEEP_BATCH deletions each. The events of each batch go out once it committed.
   */
  async applyDue(now: number): Promise<DueOutcome> {
    this.#open();
    const outcome = { ended: [] as StoredJob[], stops: [] as StopOrder[], deleted: [] as StoredJob[] };
    const take = (changes: Changes): void => {
      outcome.ended.push(...changes.ended);
      outcome.stops.push(...changes.stops);
      outcome.deleted.push(...changes.deleted);
    };
    for (;;) {
      const batch = await this.#transaction((tx) => applyTimeouts(tx, now));
      for (const changes of batch.changes) {
        take(changes);
        this.#publish(changes.events);
      }
      if (batch.locked < TIMEOUT_BATCH) break;
    }
    for (const kind of ['ttl', 'retention'] as const) {
      for (;;) {
        this.#open();
        const changes = newChanges();
        const deleted = await sweepDue(this.#sql, kind, now, changes);
        take(changes);
        this.#publish(changes.events);
        if (deleted < SWEEP_BATCH) break;
      }
    }
    return outcome;
  }

  // -------------------------------------------------------------- events and life

  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.#hub.subscribe(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#recheck?.cancel();
    this.#peers.close();
    // The connections are the database handle's: its opener closes it.
    // The events still held go out first, unless the database does not answer.
    await withinTime(this.#outbox.flushed(), CLOSE_FLUSH_MS, undefined, systemClock, false);
    await this.#hub.close();
  }

  // -------------------------------------------------------------- internals

  #open(): void {
    if (this.#closed) throw new Error('The job store is closed');
    if (this.#refused) throw this.#refused;
  }

  /** Measure the clock again (the connection came back): refuse changes while it is beyond the bound, and look again until it is not. */
  #checkClock(clock: { now(): number }, maxSkewMs: number, onError: (error: unknown) => void): void {
    measureClockSkew(this.#sql, () => clock.now()).then((skew) => {
      this.#refused = skewRefusal(skew, maxSkewMs);
      if (this.#refused) onError(this.#refused);
      if (this.#refused && !this.#closed) {
        this.#recheck ??= systemClock.setTimer(SKEW_RECHECK_MS, () => {
          this.#recheck = undefined;
          this.#checkClock(clock, maxSkewMs, onError);
        });
      }
    }, onError);
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
  /** Run `work` in a transaction, retried on a deadlock or serialization failure; the caller publishes what it did. */
  async #transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.#sql.begin((tx) => work(tx))) as T;
      } catch (error) {
        if (attempt >= RETRIES || !(error instanceof postgres.PostgresError) || !RETRIED_CODES.has(error.code)) throw error;
      }
    }
  }

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
