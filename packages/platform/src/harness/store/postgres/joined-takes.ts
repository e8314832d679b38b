/**
 * @module harness/store/postgres/joined-takes
 * The store's take path (issue 33, item 2). Takes made together (one turn of the event
 * loop, or while a take statement is in flight: coalescer.ts) go in one claim per
 * endpoint and worker (a worker of concurrency n asks n times), the claims side by side;
 * the oldest jobs go to the earliest call, each gets up to its `max`. A claim writes the
 * endpoint's row and the worker's presence only when take-writes.ts says so, and the
 * facts of each job taken are kept for its completion (completion.ts).
 */
import type postgres from 'postgres';
import type { Job } from 'serverless-worker/internal/job/index.js';
import { toDelivery } from 'serverless-worker/internal/harness/store/job-record.js';
import type { StoreEvent } from 'serverless-worker/internal/harness/store/job-store.js';
import { Coalescer } from './coalescer.js';
import type { TakenFacts } from './completion.js';
import { ClaimedRow, claimJobs } from './queue.js';
import type { TakeWrites } from './take-writes.js';

/** Takes joined in one round at most (their claims run side by side, one per endpoint and worker). */
const TAKE_BATCH = { maxItems: 256, maxSize: 256 };

type TakeAnswer = { readonly jobs: Job[] } | { readonly error: unknown };

interface TakeCall {
  readonly endpointId: string;
  readonly workerId: string;
  readonly max: number;
  readonly now: number;
}

export class JoinedTakes {
  readonly #sql: postgres.Sql;
  readonly #taken: TakenFacts;
  readonly #takeWrites: TakeWrites;
  readonly #publish: (events: readonly StoreEvent[]) => void;
  readonly #takes: Coalescer<TakeCall, TakeAnswer>;

  /** `publish`: hand the committed claims' events to this process's listeners and the others. */
  constructor(sql: postgres.Sql, taken: TakenFacts, takeWrites: TakeWrites, publish: (events: readonly StoreEvent[]) => void) {
    this.#sql = sql;
    this.#taken = taken;
    this.#takeWrites = takeWrites;
    this.#publish = publish;
    this.#takes = new Coalescer((takes) => this.#claimTogether(takes), TAKE_BATCH);
  }

  /** Up to `max` queued jobs of `endpointId` for `workerId`, joined with the takes made meanwhile. */
  async take(endpointId: string, workerId: string, max: number, now: number): Promise<Job[]> {
    const answer = await this.#takes.add({ endpointId, workerId, max, now }, 1);
    if ('error' in answer) throw answer.error;
    return answer.jobs;
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
}
