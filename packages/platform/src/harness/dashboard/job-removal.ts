/**
 * @module harness/dashboard/job-removal
 * When the harness removes a job, as its page says it (issue 48 item 4): a job is deleted at
 * its ttl in any state, and once it ends, at the end of its retention (1 min after /runsync,
 * up to 5 min with a longer wait; 30 min after /run), whichever comes first. A /runsync job's
 * ttl is a day by default, so the ttl alone said "in 23 h" of a result gone in a minute.
 */
import type { StoredJob } from 'serverless-worker/internal';

export interface JobRemoval {
  /** ISO time the job is removed: its ttl while it has not ended; once ended, the earlier of its ttl and its retention's end. */
  at: string;
  /** Which rule removes it at `at`. */
  by: 'ttl' | 'retention';
  /** How long it is kept once it ends, ms (from how it was submitted). */
  retentionMs: number;
  /** Once ended: ISO time its retention ends (its end + retentionMs). */
  retentionEndsAt?: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function jobRemoval(job: StoredJob): JobRemoval {
  const base = { retentionMs: job.retentionMs };
  if (job.deleteAt === undefined) return { ...base, at: iso(job.expiresAt), by: 'ttl' };
  const byRetention = job.deleteAt <= job.expiresAt;
  return { ...base, at: iso(byRetention ? job.deleteAt : job.expiresAt), by: byRetention ? 'retention' : 'ttl', retentionEndsAt: iso(job.deleteAt) };
}
