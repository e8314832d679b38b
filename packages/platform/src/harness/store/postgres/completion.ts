/**
 * @module harness/store/postgres/completion
 * A worker's result in one statement on the happy path. The job rules (job-rules.ts)
 * compute the change from the job as this process handed it out (kept whole from the claim
 * with the row's place: `TakenFacts`), and one statement writes it only where the job is
 * still that attempt, with the counter move (result-writes.ts: results posted together share
 * the statement); written by the row's place, the ended job is built from the job as claimed
 * and the change (the statement answers only the rows' keys). A row that moved since the take
 * (changed within the attempt) is written again by key with the same facts. When the facts
 * are unknown here (another process handed the job out) or the job changed since (the
 * compare-and-set matched no row), the job is read, the post rules answer a refusal or the
 * change is computed from the row read, and written the same way.
 */
import type postgres from 'postgres';
import {
  changeEvents,
  completeChange,
  type GoneWorker,
  type JobChange,
  type JobFacts,
  type JobResult,
  refusedResult,
  type ResultAck,
  type StoredJob,
  type StoreEvent,
  toJobView,
} from 'serverless-worker/internal';
import type { ResultWrites } from './result-writes.js';
import { JOB_COLUMNS, storedJobOf } from './rows.js';

/** Jobs taken through this process, kept until their result (at most this many: the oldest go first). */
const MAX_TAKEN = 20_000;
/**
 * Characters of request text the kept claimed jobs hold at most (see TakenJob's `claimed`): a job
 * whose result never comes through this process (timed out, cancelled, lost, ended by another
 * harness) stays until MAX_TAKEN newer ones push it out, so its request must not pin unbounded memory.
 */
const MAX_KEPT_REQUEST_CHARS = 8 << 20;

/** A job as this process handed it out: its attempt's facts, and its row's place (ctid) after the take. */
export interface TakenJob {
  readonly facts: JobFacts;
  readonly ctid: string;
  /**
   * The whole job as the claim left its row, while its request's text fits the budget: a result
   * written by the row's place (the row unchanged since) builds the ended job from it and the
   * change, and the statement answers only which rows it wrote (result-writes.ts).
   */
  readonly claimed?: StoredJob;
  /** The request's characters counted against the budget (0 when `claimed` is not kept). */
  readonly requestChars: number;
}

/** The jobs this process handed out, by endpoint and id, for a result in one statement. */
export class TakenFacts {
  readonly #taken = new Map<string, TakenJob>();
  #keptChars = 0;

  /** `job` as claimed, its request `requestChars` long (as text). */
  remember(job: StoredJob, ctid: string, requestChars: number): void {
    const key = keyOf(job.endpointId, job.id);
    this.#drop(key);
    const keep = this.#keptChars + requestChars <= MAX_KEPT_REQUEST_CHARS;
    if (keep) this.#keptChars += requestChars;
    this.#taken.set(key, keep ? { facts: job, ctid, claimed: job, requestChars } : { facts: factsOf(job), ctid, requestChars: 0 });
    if (this.#taken.size > MAX_TAKEN) this.#drop(this.#taken.keys().next().value as string);
  }

  /** The job as handed out for its attempt `attempt` (any attempt when undefined), forgotten here. */
  take(endpointId: string, jobId: string, attempt: number | undefined): TakenJob | undefined {
    const key = keyOf(endpointId, jobId);
    const taken = this.#taken.get(key);
    if (!taken || (attempt !== undefined && taken.facts.attempt !== attempt)) return undefined;
    this.#drop(key);
    return taken;
  }

  forget(endpointId: string, jobId: string): void {
    this.#drop(keyOf(endpointId, jobId));
  }

  /**
   * Jobs that ended or went back to the queue another way than a result here (cancel, timeout,
   * expiry, a lost worker): no longer kept (each kept one holds its job as claimed, request and all).
   */
  forgetJobs(jobs: readonly Pick<StoredJob, 'endpointId' | 'id'>[]): void {
    for (const job of jobs) this.#drop(keyOf(job.endpointId, job.id));
  }

  /** A gone worker's jobs, requeued or ended. */
  forgetGone(gone: Pick<GoneWorker, 'endpointId' | 'requeued' | 'ended'>): void {
    this.forgetJobs(gone.ended);
    for (const jobId of gone.requeued) this.#drop(keyOf(gone.endpointId, jobId));
  }

  #drop(key: string): void {
    const taken = this.#taken.get(key);
    if (!taken) return;
    this.#keptChars -= taken.requestChars;
    this.#taken.delete(key);
  }
}

/** The facts the job rules read, without the request (kept when the job's own record is not). */
function factsOf(job: StoredJob): JobFacts {
  const { id, endpointId, status, workerId, startedAt, attempt, lost, retries, retentionMs, executionTimeoutMs } = job;
  return { id, endpointId, status, workerId, startedAt, attempt, lost, retries, retentionMs, executionTimeoutMs };
}

function keyOf(endpointId: string, jobId: string): string {
  return `${endpointId}\u0000${jobId}`;
}

export interface Completed {
  readonly ack: ResultAck;
  readonly ended: StoredJob[];
  readonly events: StoreEvent[];
}

/** Tries before a result that keeps meeting a changed job gives up (each try follows a change by someone else). */
const TRIES = 5;

export async function completeJob(
  sql: postgres.Sql,
  writes: ResultWrites,
  known: TakenJob | undefined,
  post: { endpointId: string; jobId: string; workerId: string | undefined; attempt: number | undefined; result: JobResult; now: number },
): Promise<Completed> {
  // The facts kept from the take describe the attempt as handed out: a post they refuse is read and judged on the row.
  const usable = known && !refusedResult(known.claimed ?? { ...known.facts, chunkCount: 0 }, post.workerId, post.attempt) ? known : undefined;
  let facts: JobFacts | undefined = usable?.facts;
  let ctid = usable?.ctid;
  for (let tried = 0; tried < TRIES; tried++) {
    if (!facts) {
      const rows = await sql`SELECT ${sql.unsafe(JOB_COLUMNS)} FROM sw_jobs WHERE endpoint_id = ${post.endpointId} AND id = ${post.jobId}`;
      const job = rows[0] ? storedJobOf(rows[0]) : undefined;
      const refused = refusedResult(job, post.workerId, post.attempt);
      if (refused || !job) return { ack: refused ?? { applied: false, reason: 'not_found' }, ended: [], events: [] };
      facts = job;
    }
    const change = completeChange(facts, post.workerId, post.result, post.now);
    const events = changeEvents(facts, change);
    const changedAt = changedIndex(events, facts.id);
    if (changedAt >= 0) events[changedAt] = changedEvent(facts, change);
    // By place, the row is as the claim left it: the ended job is built from the job as claimed.
    const ended = await writes.write(facts, change, ctid, events, ctid === undefined ? undefined : usable?.claimed);
    if (ended) {
      // The events are this call's: the write read them before it answered (its notice, the events it held).
      if (changedAt >= 0) events[changedAt] = changedEvent(facts, change, ended);
      return { ack: { applied: true, status: change.fields.status }, ended: [ended], events };
    }
    if (ctid !== undefined) {
      ctid = undefined; // the row moved since the take (changed within the attempt, or not that attempt): by key, same facts
      continue;
    }
    facts = undefined; // changed since: read it
  }
  throw new Error(`The result of job ${post.jobId} met a job changed by others ${TRIES} times in a row`);
}

type ChangedEvent = Extract<StoreEvent, { readonly type: 'changed' }>;

/** Where `events` holds the 'changed' event of job `jobId` (-1: nowhere). */
function changedIndex(events: readonly StoreEvent[], jobId: string): number {
  for (let at = 0; at < events.length; at++) {
    const event = events[at] as StoreEvent;
    if (event.type === 'changed' && event.jobId === jobId) return at;
  }
  return -1;
}

/**
 * The result's 'changed' event: with the deadline the change set (the retention's end: schedulers
 * arm for it without asking) and, once written, the ended job's view (a /runsync waiter answers
 * without a read: ended-view.ts). A literal, not a copy of changeEvents' with fields added: the
 * two spreads a result were 3-4 % of the drain's event loop.
 */
function changedEvent(facts: JobFacts, change: JobChange, ended?: StoredJob): StoreEvent {
  const event: { -readonly [K in keyof ChangedEvent]: ChangedEvent[K] } = {
    type: 'changed',
    endpointId: facts.endpointId,
    jobId: facts.id,
    status: change.fields.status,
  };
  if (change.fields.deleteAt !== undefined) event.due = change.fields.deleteAt;
  if (ended) event.ended = toJobView(ended);
  return event;
}
