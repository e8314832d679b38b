/**
 * @module worker/handed-again
 * A take may answer a job this worker still holds: a platform that hands a job out until a
 * result for it is accepted does, while the worker still posts that result (its slot is
 * free once its handler has finished, posting-runs.ts). Such a job is not run twice: the
 * run that holds it posts its result, which ends it. It is logged once per take.
 */
import type { Logger } from 'pino';
import { runKey, type Job } from '../job/index.js';

/** The jobs of `jobs` that no run of `held` (by run key) holds; the others are logged and left out. */
export function notHeld(jobs: readonly Job[], held: ReadonlyMap<string, unknown>, logger: Logger): readonly Job[] {
  if (held.size === 0 || !jobs.some((job) => held.has(runKey(job.id, job.attempt)))) return jobs;
  const fresh: Job[] = [];
  const again: string[] = [];
  for (const job of jobs) {
    if (held.has(runKey(job.id, job.attempt))) again.push(job.id);
    else fresh.push(job);
  }
  logger.warn({ requestIds: again }, 'job(s) handed out again while this worker still holds them (running, or posting their result); not run twice');
  return fresh;
}
