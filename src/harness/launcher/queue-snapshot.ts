/**
 * @module harness/launcher/queue-snapshot
 * What the scaler needs from an endpoint's jobs: the queued ones (with their wait and
 * priority), the running ones that count for scaling, and the jobs that started since
 * the last look, with how long each waited for a worker.
 */
import type { StoredJob } from '../store/job-store.js';
import type { QueuedJobSnapshot } from './scale-decision.js';

export interface JobWait {
  jobId: string;
  workerId: string | undefined;
  waitMs: number;
}

export interface QueueSnapshot {
  queued: QueuedJobSnapshot[];
  /** IN_PROGRESS jobs that are not lowPriority. */
  runningJobs: number;
  /** Jobs started since the previous snapshot (not in `seenBefore`). */
  newlyStarted: JobWait[];
  /** Pass as `seenBefore` next time. */
  seen: Set<string>;
}

/** Look at `jobs` (the endpoint's queued and running ones); `seenBefore` holds the `jobId@startedAt` keys already reported. */
export function queueSnapshot(jobs: readonly StoredJob[], seenBefore: ReadonlySet<string>): QueueSnapshot {
  const queued: QueuedJobSnapshot[] = [];
  const newlyStarted: JobWait[] = [];
  const seen = new Set<string>();
  let runningJobs = 0;
  for (const job of jobs) {
    const lowPriority = job.request.policy?.lowPriority === true;
    if (job.status === 'IN_QUEUE') queued.push({ queuedAt: job.queuedAt, lowPriority });
    if (job.status !== 'IN_PROGRESS' || job.startedAt === undefined) continue;
    if (!lowPriority) runningJobs++;
    const key = `${job.id}@${job.startedAt}`;
    seen.add(key);
    if (!seenBefore.has(key)) newlyStarted.push({ jobId: job.id, workerId: job.workerId, waitMs: job.startedAt - job.queuedAt });
  }
  return { queued, runningJobs, newlyStarted, seen };
}
