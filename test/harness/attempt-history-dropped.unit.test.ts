/**
 * Attempt history is not dropped silently (issue 32 item 9): the dashboard's attempt log
 * keeps the history of its last maxJobs jobs; a job whose record the cap dropped is shown
 * with a note saying so and why, and the log counts the jobs it dropped.
 */
import { describe, expect, it } from 'vitest';
import { AttemptLog, type JobAttemptFacts } from '../../packages/platform/src/harness/dashboard/attempt-log.js';
import { jobAttemptsView } from '../../packages/platform/src/harness/dashboard/attempt-view.js';

const failedTwice = (id: string): JobAttemptFacts => ({
  id,
  endpointId: 'ep',
  status: 'FAILED',
  attempt: 2,
  retries: 1,
  lost: 1,
  startedAt: 10,
  endedAt: 20,
  workerId: 'w2',
});

describe('attempt history past maxJobs', () => {
  it("counts the jobs it dropped, and the page says a job's earlier attempts are gone", () => {
    const log = new AttemptLog({ maxJobs: 3 }, () => 0);
    for (let i = 0; i < 5; i++) {
      log.taken('ep', 'w1', [{ id: `job-${i}`, attempt: 1 }]);
      log.requeued('ep', 'w1', [`job-${i}`], 'its worker was declared gone');
    }
    expect(log.evictedJobs).toBe(2);
    expect(log.forJob('ep', 'job-0')).toBeUndefined();
    const gone = jobAttemptsView(failedTwice('job-0'), log.forJob('ep', 'job-0'), [], 100, log.limits, log.evictedJobs);
    expect(gone.historyDropped).toContain('earlier attempts are no longer recorded');
    expect(gone.historyDropped).toContain('last 3 jobs');
    expect(gone.historyDropped).toContain('2 older ones');
    const kept = jobAttemptsView(failedTwice('job-4'), log.forJob('ep', 'job-4'), [], 100, log.limits, log.evictedJobs);
    expect(kept.historyDropped).toBeUndefined();
    expect(kept.attempts.length).toBe(2);
    // A job with one plain attempt has nothing missing.
    const plain = jobAttemptsView({ ...failedTwice('job-9'), attempt: 1, retries: 0, lost: 0 }, undefined, [], 100, log.limits, log.evictedJobs);
    expect(plain.historyDropped).toBeUndefined();
  });
});
