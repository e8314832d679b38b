/**
 * @module harness/dashboard/attempt-view
 * A job's attempts as the job page shows them: the attempts the AttemptLog recorded,
 * completed from the job as it is now (the current attempt of an in-process worker,
 * which has no take event; the last attempt of an ended job the log kept no record
 * of) and from the launcher's scale events (a recorded attempt still open whose job is
 * back in the queue went with its worker's exit or crash).
 */
import type { ScaleEvent } from '../launcher/scale-events.js';
import { ATTEMPT_LOG_LIMITS, type AttemptEntry, type AttemptOutcome, type JobAttemptFacts, type JobAttempts } from './attempt-log.js';

export interface AttemptView {
  attempt: number | null;
  workerId?: string;
  startedAt?: string;
  endedAt?: string;
  /** ms from the take to the end (or to now while running). */
  durationMs?: number;
  outcome: AttemptOutcome;
  reason?: string;
  stalePosts: number;
  lastStalePost?: { at: string; what: string; workerId: string };
}

export interface JobAttemptsView {
  endpointId: string;
  jobId: string;
  status: JobAttemptFacts['status'];
  /** The job's current attempt (0 until a worker first takes it). */
  attempt: number;
  /** Times it went back to the queue (/retry, or a lost worker). */
  retries: number;
  /** Times it was lost (its worker gone, its take answer lost) since it was submitted or last retried. */
  lost: number;
  /** Attempts recorded, oldest first. */
  attempts: AttemptView[];
  /** Older attempts dropped by the per-job cap. */
  dropped: number;
  limits: { maxJobs: number; maxAttemptsPerJob: number };
  /** Why attempts of this job are missing whole (its record went with the maxJobs cap), in words; absent otherwise. */
  historyDropped?: string;
}

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

function toView(entry: AttemptEntry, now: number): AttemptView {
  const startedAt = iso(entry.startedAt);
  const endedAt = iso(entry.endedAt);
  const until = entry.endedAt ?? (entry.outcome === 'running' ? now : undefined);
  return {
    attempt: entry.attempt,
    ...(entry.workerId !== undefined ? { workerId: entry.workerId } : {}),
    ...(startedAt !== undefined ? { startedAt } : {}),
    ...(endedAt !== undefined ? { endedAt } : {}),
    ...(entry.startedAt !== undefined && until !== undefined ? { durationMs: Math.max(0, until - entry.startedAt) } : {}),
    outcome: entry.outcome,
    ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
    stalePosts: entry.stalePosts,
    ...(entry.lastStalePost ? { lastStalePost: { ...entry.lastStalePost, at: new Date(entry.lastStalePost.at).toISOString() } } : {}),
  };
}

/** The exit or crash of `workerId` that took `jobId` back to the queue, if the launcher saw one. */
function exitOf(events: readonly ScaleEvent[], workerId: string | undefined, jobId: string): ScaleEvent | undefined {
  if (workerId === undefined) return undefined;
  return events.findLast((e) => (e.kind === 'exit' || e.kind === 'crash') && e.workerId === workerId && (e.requeued?.includes(jobId) ?? false));
}

export function jobAttemptsView(
  job: JobAttemptFacts,
  recorded: JobAttempts | undefined,
  scaleEvents: readonly ScaleEvent[],
  now: number,
  limits: { maxJobs: number; maxAttemptsPerJob: number } = ATTEMPT_LOG_LIMITS,
  evictedJobs = 0,
): JobAttemptsView {
  const entries: AttemptEntry[] = (recorded?.attempts ?? []).map((entry) => ({ ...entry }));
  const running = job.status === 'IN_PROGRESS';
  for (const entry of entries) {
    if (entry.outcome !== 'running' || (running && entry.attempt === job.attempt)) continue;
    // Still open in the log, but no longer the job's running attempt: it went back to the queue.
    const exit = exitOf(scaleEvents, entry.workerId, job.id);
    entry.outcome = 'requeued';
    if (exit) entry.endedAt = exit.at;
    entry.reason = exit ? `requeued: its worker ${exit.message}` : 'requeued: its worker was lost';
  }
  if (running && job.startedAt !== undefined && !entries.some((e) => e.attempt === job.attempt && e.outcome === 'running')) {
    entries.push({
      attempt: job.attempt,
      ...(job.workerId !== undefined ? { workerId: job.workerId } : {}),
      startedAt: job.startedAt,
      outcome: 'running',
      stalePosts: 0,
    });
  }
  const ended = job.status !== 'IN_QUEUE' && job.status !== 'IN_PROGRESS' ? job.status : undefined;
  if (ended !== undefined && job.startedAt !== undefined && !entries.some((e) => e.attempt === job.attempt && e.outcome !== 'requeued')) {
    // The log keeps no record of a plain end: the job itself says who ran its last attempt and how it ended.
    const stale = entries.find((e) => e.attempt === job.attempt);
    const workerId = job.resultFrom?.workerId ?? job.cancelledFrom ?? (job.error?.worker_id || undefined);
    const entry: AttemptEntry = {
      attempt: job.attempt,
      ...(workerId !== undefined ? { workerId } : {}),
      startedAt: job.startedAt,
      ...(job.endedAt !== undefined ? { endedAt: job.endedAt } : {}),
      outcome: ended,
      ...(job.error !== undefined ? { reason: `${job.error.error_type}: ${job.error.error_message}` } : {}),
      stalePosts: stale?.stalePosts ?? 0,
      ...(stale?.lastStalePost ? { lastStalePost: stale.lastStalePost } : {}),
    };
    if (stale) entries.splice(entries.indexOf(stale), 1, entry);
    else entries.push(entry);
  }
  return {
    endpointId: job.endpointId,
    jobId: job.id,
    status: job.status,
    attempt: job.attempt,
    retries: job.retries,
    lost: job.lost,
    attempts: entries.map((entry) => toView(entry, now)),
    dropped: recorded?.dropped ?? 0,
    limits: { maxJobs: limits.maxJobs, maxAttemptsPerJob: limits.maxAttemptsPerJob },
    ...historyDropped(job, recorded, limits.maxJobs, evictedJobs),
  };
}

/**
 * A job that was retried, lost or taken more than once had a record; without one, the
 * maxJobs cap dropped it (it used to go silently, and the page showed only the last attempt).
 */
function historyDropped(job: JobAttemptFacts, recorded: JobAttempts | undefined, maxJobs: number, evictedJobs: number): { historyDropped?: string } {
  if (recorded !== undefined || evictedJobs === 0 || (job.retries === 0 && job.lost === 0 && job.attempt <= 1)) return {};
  return {
    historyDropped: `its earlier attempts are no longer recorded: the dashboard keeps the attempt history of its last ${maxJobs} jobs with one to show, and has dropped that of ${evictedJobs} older ones since the harness started`,
  };
}
