/**
 * @module harness/dashboard/attempt-log
 * The dashboard's record of each job's attempts, collected from the harness's events
 * (the job store itself keeps only the current attempt): which worker took each
 * attempt and when (the worker API's job-take), how it ended (the job's end; a requeue
 * because its worker was declared gone or its take answer was lost; a later take), and
 * the posts of an attempt refused as stale once another one had started.
 *
 * Bounded: the attempts of at most `maxJobs` jobs (default 10 000; the job first
 * recorded longest ago goes first) and the last `maxAttemptsPerJob` attempts of each
 * (default 16; the job counts those dropped). Jobs dropped by the first cap are counted
 * (evictedJobs) and the job page says when a job's history is missing. Jobs taken by in-process workers have no
 * take event: their attempt is recorded when it ends.
 *
 * The common case costs next to nothing: a job that completes (or is cancelled) on its
 * only attempt, with nothing refused, leaves no record (its one attempt is read from
 * the job itself, attempt-view.ts); only failures (which /retry may follow), requeues
 * and stale posts stay.
 */
import { HeldMap, type JobErrorPayload, type JobStatus, systemClock } from 'serverless-worker/internal';

/** What the log and the view read of a job: a JobRecord has it (and so will a job store's answer). */
export interface JobAttemptFacts {
  readonly id: string;
  readonly endpointId: string;
  readonly status: JobStatus;
  readonly attempt: number;
  readonly retries: number;
  readonly lost: number;
  readonly startedAt?: number | undefined;
  readonly endedAt?: number | undefined;
  readonly workerId?: string | undefined;
  readonly error?: JobErrorPayload | undefined;
  readonly resultFrom?: { readonly workerId: string | undefined; readonly attempt: number } | undefined;
  readonly cancelledFrom?: string | undefined;
}

export const ATTEMPT_LOG_LIMITS = { maxJobs: 10_000, maxAttemptsPerJob: 16 } as const;

/** How an attempt ended; `running` while it has not (as far as the log knows). */
export type AttemptOutcome = 'running' | Exclude<JobStatus, 'IN_QUEUE' | 'IN_PROGRESS'> | 'requeued';

export interface AttemptEntry {
  /** The attempt number (the job's `attempt` while it ran); null for a job that ended before any worker took it again. */
  attempt: number | null;
  workerId?: string;
  /** Epoch ms the worker took it. */
  startedAt?: number;
  /** Epoch ms it ended. */
  endedAt?: number;
  outcome: AttemptOutcome;
  /** Why it ended so: the error type and message, the worker declared gone, a lost take answer. */
  reason?: string;
  /** Posts (result, progress, stream chunk) from this attempt refused because another attempt was current. */
  stalePosts: number;
  lastStalePost?: { at: number; what: string; workerId: string };
}

export interface JobAttempts {
  readonly endpointId: string;
  readonly jobId: string;
  readonly attempts: AttemptEntry[];
  /** Attempts dropped by the per-job cap (the oldest). */
  dropped: number;
}

const MAX_REASON = 300;

function clip(text: string): string {
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON - 1)}…` : text;
}

/** A record as the log keeps it: with its place in the ring. */
interface RingRecord extends JobAttempts {
  readonly slot: number;
}

export class AttemptLog {
  /**
   * By job id (the harness makes them unique: random UUIDs); each record names its endpoint. A HeldMap: a
   * record comes at each take and goes at a plain end (collections/held-map.ts).
   */
  readonly #jobs = new HeldMap<string, RingRecord>();
  /**
   * The jobs' keys in the order first recorded, a ring of `maxJobs`: the slot a new key
   * takes holds the key to drop. (Taking the Map's first key instead walks past every
   * entry deleted since its last compaction: about 20 µs a job at the cap.)
   */
  readonly #order: Array<RingRecord | undefined>;
  #next = 0;
  /** Jobs whose record the maxJobs cap dropped, since the log was made. */
  #evictedJobs = 0;
  readonly #maxJobs: number;
  readonly #maxAttempts: number;
  readonly #now: () => number;

  constructor(limits: { maxJobs?: number; maxAttemptsPerJob?: number } = {}, now: () => number = () => systemClock.now()) {
    this.#maxJobs = limits.maxJobs ?? ATTEMPT_LOG_LIMITS.maxJobs;
    this.#maxAttempts = limits.maxAttemptsPerJob ?? ATTEMPT_LOG_LIMITS.maxAttemptsPerJob;
    this.#now = now;
    this.#order = [];
  }

  /** The caps this log keeps to. */
  get limits(): { maxJobs: number; maxAttemptsPerJob: number } {
    return { maxJobs: this.#maxJobs, maxAttemptsPerJob: this.#maxAttempts };
  }

  /** Jobs whose attempt history the maxJobs cap dropped since the harness started (the page says so: attempt-view.ts). */
  get evictedJobs(): number {
    return this.#evictedJobs;
  }

  /** Jobs with a record now. */
  get size(): number {
    return this.#jobs.size;
  }

  /** `workerId` took attempt `attempt` of each job. An earlier attempt still open went back to the queue. */
  taken(endpointId: string, workerId: string, jobs: ReadonlyArray<{ id: string; attempt?: number | undefined }>): void {
    const at = this.#now();
    for (const job of jobs) {
      const record = this.#record(endpointId, job.id);
      for (const entry of record.attempts) {
        if (entry.outcome === 'running') this.#close(entry, 'requeued', at, 'requeued: its worker was lost');
      }
      this.#push(record, { attempt: job.attempt ?? null, workerId, startedAt: at, outcome: 'running', stalePosts: 0 });
    }
  }

  /** The job ended (any terminal status): its current attempt ends so. */
  ended(job: JobAttemptFacts): void {
    const existing = this.#jobs.size > 0 ? this.#find(job.endpointId, job.id) : undefined;
    if (isPlainEnd(job, existing)) {
      // Its only attempt, read from the job itself: no record to keep (nor in the ring, where it
      // stayed reachable until its slot came round: 10 000 dead records, bench/README issue 34 item 3).
      if (existing) {
        this.#jobs.delete(job.id);
        if (this.#order[existing.slot] === existing) this.#order[existing.slot] = undefined;
      }
      return;
    }
    const record = existing ?? this.#record(job.endpointId, job.id);
    const at = job.endedAt ?? this.#now();
    const reason = job.error !== undefined ? clip(`${job.error.error_type}: ${job.error.error_message}`) : undefined;
    if (job.startedAt === undefined) {
      // Ended from the queue (cancelled): an attempt lost before still open went back to the queue first.
      for (const entry of record.attempts) if (entry.outcome === 'running') this.#close(entry, 'requeued', at, 'requeued: its worker was lost');
      this.#push(record, {
        attempt: null,
        endedAt: at,
        outcome: job.status === 'IN_QUEUE' || job.status === 'IN_PROGRESS' ? 'CANCELLED' : job.status,
        reason: reason ?? 'ended while queued',
        stalePosts: 0,
      });
      return;
    }
    let entry = record.attempts.find((e) => e.attempt === job.attempt && e.outcome === 'running');
    for (const other of record.attempts)
      if (other !== entry && other.outcome === 'running') this.#close(other, 'requeued', job.startedAt, 'requeued: its worker was lost');
    if (!entry) {
      const workerId = job.resultFrom?.workerId ?? job.cancelledFrom ?? (job.error?.worker_id || undefined);
      entry = { attempt: job.attempt, ...(workerId !== undefined ? { workerId } : {}), startedAt: job.startedAt, outcome: 'running', stalePosts: 0 };
      this.#push(record, entry);
    }
    const outcome: AttemptOutcome = job.status === 'IN_QUEUE' || job.status === 'IN_PROGRESS' ? 'CANCELLED' : job.status;
    this.#close(entry, outcome, at, reason);
  }

  /** These jobs of `workerId` went back to the queue (`reason`: why, e.g. the worker was declared gone). */
  requeued(endpointId: string, workerId: string, jobIds: readonly string[], reason: string): void {
    const at = this.#now();
    for (const jobId of jobIds) {
      const record = this.#find(endpointId, jobId);
      const entry = record?.attempts.findLast((e) => e.outcome === 'running' && e.workerId === workerId);
      if (entry) this.#close(entry, 'requeued', at, clip(reason));
      else if (record) this.#push(record, { attempt: null, workerId, endedAt: at, outcome: 'requeued', reason: clip(reason), stalePosts: 0 });
    }
  }

  /** A post of attempt `attempt` was refused: another attempt of the job was current. */
  stalePost(endpointId: string, workerId: string, jobId: string, attempt: number, what: string): void {
    const record = this.#record(endpointId, jobId);
    let entry = record.attempts.find((e) => e.attempt === attempt);
    if (!entry) {
      entry = { attempt, workerId, outcome: 'requeued', reason: 'seen only by its refused posts', stalePosts: 0 };
      this.#push(record, entry);
    }
    entry.stalePosts++;
    entry.lastStalePost = { at: this.#now(), what, workerId };
  }

  /** The attempts recorded for the job, oldest first (undefined when none). */
  forJob(endpointId: string, jobId: string): JobAttempts | undefined {
    return this.#find(endpointId, jobId);
  }

  #find(endpointId: string, jobId: string): RingRecord | undefined {
    const record = this.#jobs.get(jobId);
    return record?.endpointId === endpointId ? record : undefined;
  }

  #record(endpointId: string, jobId: string): RingRecord {
    let record = this.#find(endpointId, jobId);
    if (!record) {
      record = { endpointId, jobId, attempts: [], dropped: 0, slot: this.#next };
      const oldest = this.#order[this.#next];
      // Unless a plain end removed it already (and the id has a newer record since).
      if (oldest !== undefined && this.#jobs.get(oldest.jobId) === oldest) {
        this.#jobs.delete(oldest.jobId);
        this.#evictedJobs++;
      }
      this.#order[this.#next] = record;
      this.#next = (this.#next + 1) % this.#maxJobs;
      this.#jobs.set(jobId, record);
    }
    return record;
  }

  #push(record: JobAttempts, entry: AttemptEntry): void {
    record.attempts.push(entry);
    if (record.attempts.length > this.#maxAttempts) {
      const excess = record.attempts.length - this.#maxAttempts;
      record.attempts.splice(0, excess);
      record.dropped += excess;
    }
  }

  #close(entry: AttemptEntry, outcome: AttemptOutcome, at: number, reason: string | undefined): void {
    entry.outcome = outcome;
    entry.endedAt = at;
    if (reason !== undefined) entry.reason = reason;
  }
}

/**
 * Whether the end leaves nothing the job itself does not show: COMPLETED or CANCELLED
 * (no /retry follows) on the first attempt, never lost or retried, and at most its own
 * take recorded, with no stale post.
 */
function isPlainEnd(job: JobAttemptFacts, record: JobAttempts | undefined): boolean {
  if ((job.status !== 'COMPLETED' && job.status !== 'CANCELLED') || job.retries > 0 || job.lost > 0 || job.attempt > 1) return false;
  if (!record) return true;
  const only = record.attempts.length === 1 ? record.attempts[0] : undefined;
  return record.dropped === 0 && only !== undefined && only.attempt === job.attempt && only.outcome === 'running' && only.stalePosts === 0;
}
